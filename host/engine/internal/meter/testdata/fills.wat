;; fills runs memory.fill of size bytes n times in one loop, and returns n.
(module
  (memory 1)
  (func (export "fills") (param $n i32) (param $size i32) (result i32) (local $i i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (memory.fill (i32.const 0) (local.get $i) (local.get $size))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $i)))
