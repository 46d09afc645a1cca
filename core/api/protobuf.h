/*
 * Kubernetes protobuf request bodies (Content-Type
 * application/vnd.kubernetes.protobuf), as kubectl's typed clients send them
 * for "kubectl create namespace|configmap|secret|deployment|job|...", and
 * the DeleteOptions of client-go's DELETEs, turned into the JSON object the
 * same client would have sent as JSON.
 */
#ifndef VOLRAY_PROTOBUF_H
#define VOLRAY_PROTOBUF_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define PROTOBUF_CONTENT_TYPE "application/vnd.kubernetes.protobuf"

/*
 * Decode a Kubernetes protobuf body (magic "k8s\0" + runtime.Unknown
 * envelope) into the equivalent JSON object, with apiVersion and kind from
 * the envelope's TypeMeta. NULL with *cause (malloc'd) for malformed input or
 * a kind we have no schema for ("protobuf decoding of kind X is not
 * supported; send JSON").
 */
cJSON	*protobuf_decode(const void *buf, size_t len, char **cause);

#endif
