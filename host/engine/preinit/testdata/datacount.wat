;; A data count section (present because code drops a segment by index): the snapshot keeps at
;; least as many segments as the original declares.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "")
  (data (i32.const 0) "")
  (data (i32.const 0) "")
  (data (i32.const 100) "x")
  (func (export "_initialize") (i32.store8 (i32.const 100) (i32.const 0)))
  (func (export "drop3") (data.drop 3))
  (func (export "byte100") (result i32) (i32.load8_u (i32.const 100))))
