;; recurse calls itself without end and has no loop.
(module
  (func $r (export "recurse") (param i32) (call $r (i32.add (local.get 0) (i32.const 1)))))
