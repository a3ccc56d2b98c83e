;; noimport has functions but no import or global section; answer calls through a loop.
(module
  (func $f (result i32) (i32.const 41))
  (func (export "answer") (result i32) (local $i i32)
    (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1))) (br_if $l (i32.lt_u (local.get $i) (i32.const 10))))
    (i32.add (call $f) (i32.const 1))))
