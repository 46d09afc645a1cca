return { primary = "ray.io/v1/rayjobs", reconcile = function() return nil end }
