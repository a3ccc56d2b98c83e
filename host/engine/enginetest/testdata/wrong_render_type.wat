;; loadout_render has type (i32) -> i32.
;; Built by enginetest with: wat2wasm wrong_render_type.wat -o wrong_render_type.wasm
(module
  
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))
  (global $count (mut i32) (i32.const 0))
  (data (i32.const 64) "{\"name\":\"render.test\",\"version\":\"1.0.0\",\"abiVersion\":1,\"harness\":\"test\",\"transports\":[\"stdio\",\"http\"],\"nativeSkills\":false,\"roots\":[\"config\",\"run\"]}")
  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32)) (i64.extend_i32_u (local.get $len))))
  (func (export "_initialize"))
  (func (export "loadout_abi_version") (result i32) (i32.const 1))
  (func $alloc (export "loadout_alloc") (param $n i32) (result i32)
    (local $p i32) (local $need i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (local.get $p) (local.get $n)))
    (local.set $need (i32.sub (i32.shr_u (i32.add (global.get $heap) (i32.const 65535)) (i32.const 16)) (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then (if (i32.eq (memory.grow (local.get $need)) (i32.const -1)) (then unreachable))))
    (local.get $p))
  (func (export "loadout_manifest") (result i64)
    (global.set $count (i32.add (global.get $count) (i32.const 1)))
    (i32.store8 (i32.const 32) (i32.add (i32.load8_u (i32.const 32)) (i32.const 1)))
    (call $pack (i32.const 64) (i32.const 148)))
  (func (export "loadout_render") (param i32) (result i32) (i32.const 0))
  
)
