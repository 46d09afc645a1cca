return { primary = "ray.io/v1/rayservices", reconcile = function() return nil end }
