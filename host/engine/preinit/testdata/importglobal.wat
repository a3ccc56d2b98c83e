(module
  (import "env" "g" (global i32))
  (memory (export "memory") 1)
  (func (export "_initialize")))
