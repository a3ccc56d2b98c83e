;; A reactor with the ABI exports whose render writes 99 at address 8192 and then returns the span [0, 4096).
(module
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 0))
  (data (i32.const 1024) "{\"name\":\"t\",\"version\":\"1\",\"abiVersion\":1,\"harness\":\"claude\",\"transports\":[\"stdio\",\"http\"],\"nativeSkills\":false,\"roots\":[\"config\"]}")
  (func (export "_initialize") (global.set $g (i32.const 7)))
  (func (export "loadout_abi_version") (result i32) i32.const 1)
  (func (export "loadout_alloc") (param i32) (result i32) i32.const 16384)
  (func (export "loadout_manifest") (result i64)
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 130)))
  (func (export "loadout_render") (param i32 i32) (result i64)
    (i32.store8 (i32.const 8192) (i32.const 99))
    (i64.const 4096)))
