(module
  (memory (export "memory") 1)
  (func (export "_initialize") (loop $l (br $l))))
