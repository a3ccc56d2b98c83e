;; Exports what features.wat imports from another module: a global, a table and a function.
(module
  (global (export "seven") i32 (i32.const 7))
  (table (export "tab") 4 funcref)
  (func (export "twice") (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2))))
