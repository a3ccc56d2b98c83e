;; bare has no type, import or global section of its own until it is instrumented.
(module)
