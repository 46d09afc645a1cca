-- ReplicationController: the ReplicaSet's work (lua/lib/replicas.lua) for
-- the v1 kind that came before it, whose selector is an equality map.
local controller = require("replicas").controller("v1/replicationcontrollers")
controller.event_source = "replication-controller"	-- kube's
return controller
