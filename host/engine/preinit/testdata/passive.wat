(module
  (memory (export "memory") 1)
  (data "passive bytes")
  (func (export "_initialize")))
