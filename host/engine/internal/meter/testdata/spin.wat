;; spin never returns and never calls a function.
(module
  (func (export "spin") (loop $l (br $l))))
