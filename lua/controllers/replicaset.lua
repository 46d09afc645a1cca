-- ReplicaSet: keep spec.replicas pods from the template running; the
-- work is lua/lib/replicas.lua's, shared with the ReplicationController.
return require("replicas").controller("apps/v1/replicasets")
