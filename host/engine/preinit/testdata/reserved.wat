(module
  (memory (export "memory") 1)
  (global $g i32 (i32.const 1))
  (export "loadout.preinit.global.0" (global $g))
  (func (export "_initialize")))
