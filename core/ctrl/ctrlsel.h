/*
 * Which Lua controllers run (volrayd --controllers): a comma-separated
 * list in kube-controller-manager's syntax, where `*` turns on every
 * controller, NAME turns NAME on and -NAME turns it off. For each
 * controller the first item naming it decides; a controller no item names
 * runs when the list holds `*`. NAME is a controller's file stem
 * (controllers/NAME.lua). The default, no list, is `*`.
 */
#ifndef VOLRAY_CTRLSEL_H
#define VOLRAY_CTRLSEL_H

typedef struct ctrlsel ctrlsel;

/*
 * Parse list; NULL with *cause (malloc'd) when an item is empty, `-`
 * alone, `-*` or holds a character a file stem cannot ([A-Za-z0-9_-]).
 */
ctrlsel *ctrlsel_parse(const char *list, char **cause);
void ctrlsel_free(ctrlsel *);
/* Whether the controller name runs (sel NULL: every one does). */
int ctrlsel_enabled(const ctrlsel *sel, const char *name);
/*
 * 0 when every name the list holds is one of known[0..nknown-1]; else -1
 * with *cause (malloc'd) naming the first unknown one and the known ones.
 */
int ctrlsel_check(const ctrlsel *sel, char *const *known, int nknown,
    char **cause);

#endif
