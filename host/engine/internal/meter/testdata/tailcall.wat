;; count tail-calls itself n times and returns n; forever runs without end in constant stack.
;; Built with wat2wasm --enable-tail-call.
(module
  (func $count (export "count") (param $n i32) (param $acc i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (local.get $acc))
      (else (return_call $count (i32.sub (local.get $n) (i32.const 1)) (i32.add (local.get $acc) (i32.const 1))))))
  (func $forever (export "forever") (return_call $forever)))
