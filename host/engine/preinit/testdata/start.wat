(module
  (memory (export "memory") 1)
  (func $s)
  (start $s)
  (func (export "_initialize")))
