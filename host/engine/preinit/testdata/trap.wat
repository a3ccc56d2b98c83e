(module
  (memory (export "memory") 1)
  (func (export "_initialize") unreachable))
