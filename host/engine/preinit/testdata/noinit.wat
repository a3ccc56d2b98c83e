(module
  (memory (export "memory") 1)
  (global (mut i32) (i32.const 1))
  (data (i32.const 8) "kept"))
