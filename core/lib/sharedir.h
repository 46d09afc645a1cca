#ifndef VOLRAY_SHAREDIR_H
#define VOLRAY_SHAREDIR_H

/* dir/crds is a directory. */
int share_dir_has_crds(const char *dir);
/* The share directory (malloc'd), or NULL with *cause naming the places. */
char *share_dir_find(char **cause);

#endif
