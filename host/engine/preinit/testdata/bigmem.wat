(module
  (memory (export "memory") 8)
  (func (export "_initialize")))
