(module
  (import "env" "host" (func))
  (memory (export "memory") 1)
  (func (export "_initialize")))
