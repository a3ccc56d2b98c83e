;; _initialize grows memory one page at a time and traps when a grow fails, as the Go runtime
;; does when it runs out of memory.
(module
  (memory (export "memory") 1)
  (func (export "_initialize")
    (loop $l
      (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
      (br $l))))
