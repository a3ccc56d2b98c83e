;; Every construct whose indices Instrument moves, and instructions of each WebAssembly 2.0
;; feature. Each export named run_* returns an i64 that depends on the whole computation.
(module
  (type $unary (func (param i32) (result i32)))
  (type $pair (func (param i32) (result i32 i32)))
  (import "env" "add1" (func $add1 (param i32) (result i32)))
  (import "prov" "seven" (global $seven i32))
  (import "prov" "tab" (table $ptab 4 funcref))
  (import "prov" "twice" (func $twice (param i32) (result i32)))
  (memory (export "memory") 1 4)
  (table $tab 8 funcref)
  (global $started (mut i32) (i32.const 0))
  (global $fref funcref (ref.func $square))
  (global $counter (export "counter") (mut i64) (i64.const 0))
  (elem (table $tab) (i32.const 0) func $square $cube $add1 $twice)
  (elem $passive funcref (ref.func $cube) (ref.func $square) (ref.null func))
  (elem declare func $boom)
  (data $bytes "0123456789abcdef")
  (start $init)

  (func $init
    (global.set $started (i32.add (global.get $seven) (i32.const 100))))
  (func $square (type $unary) (i32.mul (local.get 0) (local.get 0)))
  (func $cube (type $unary) (i32.mul (local.get 0) (call $square (local.get 0))))
  (func $boom (export "boom") unreachable)

  (func (export "run_start") (result i64) (i64.extend_i32_u (global.get $started)))

  (func (export "run_calls") (result i64)
    (i64.extend_i32_u
      (i32.add (call $add1 (call $twice (call $cube (i32.const 3))))
               (call $square (i32.const 5)))))

  (func (export "run_indirect") (result i64)
    (local $i i32) (local $acc i32)
    ;; the table the element segment filled, the one filled from a passive segment, the
    ;; funcref global and a ref.func
    (table.init $tab $passive (i32.const 4) (i32.const 0) (i32.const 2))
    (table.set $tab (i32.const 6) (global.get $fref))
    (table.set $ptab (i32.const 0) (ref.func $cube))
    (loop $l
      (local.set $acc (i32.add (i32.mul (local.get $acc) (i32.const 31))
                               (call_indirect $tab (type $unary) (i32.add (local.get $i) (i32.const 2)) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 7))))
    (local.set $acc (i32.add (local.get $acc) (call_indirect $ptab (type $unary) (i32.const 4) (i32.const 0))))
    (i64.extend_i32_u (i32.add (local.get $acc) (ref.is_null (table.get $tab (i32.const 7))))))

  (func (export "run_loops") (result i64)
    (local $i i32) (local $j i32) (local $sum i64)
    (loop $outer
      (local.set $j (i32.const 0))
      (loop $inner
        (local.set $sum (i64.add (local.get $sum) (i64.extend_i32_u (i32.mul (local.get $i) (local.get $j)))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br_if $inner (i32.lt_u (local.get $j) (i32.const 300))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $outer (i32.lt_u (local.get $i) (i32.const 300))))
    (global.set $counter (local.get $sum))
    (block $b (result i64)
      (br_table $b $b (local.get $sum) (i32.const 1))))

  (func $split (type $pair) (i32.div_u (local.get 0) (i32.const 10)) (i32.rem_u (local.get 0) (i32.const 10)))
  (func (export "run_multi") (result i64)
    (i32.const 1234)
    (block (param i32) (result i32 i32) (call $split))
    (loop (param i32 i32) (result i32) (i32.add))
    (i64.extend_i32_s)
    ;; typed select, sign extension, saturating truncation
    (select (result i64) (i64.const 5) (i64.const 6) (i32.const 0))
    (i64.add)
    (i64.extend8_s (i64.const 0xff))
    (i64.add)
    (i64.trunc_sat_f64_s (f64.const 1e30))
    (i64.add))

  (func (export "run_bulk") (result i64)
    (local $i i32)
    (drop (memory.grow (i32.const 1)))
    (memory.init $bytes (i32.const 100) (i32.const 0) (i32.const 16))
    (loop $l
      (memory.copy (i32.add (i32.const 200) (i32.mul (local.get $i) (i32.const 16))) (i32.const 100) (i32.const 16))
      (memory.fill (i32.add (i32.const 200) (local.get $i)) (i32.const 0x41) (i32.const 1))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 50))))
    (data.drop $bytes)
    (drop (table.grow $tab (ref.null func) (i32.const 2)))
    (table.fill $tab (i32.const 8) (ref.func $square) (i32.const 2))
    (table.copy $tab $tab (i32.const 0) (i32.const 8) (i32.const 1))
    (elem.drop $passive)
    (i64.add
      (i64.add (i64.load (i32.const 200)) (i64.load (i32.const 1000)))
      (i64.extend_i32_u (i32.add (i32.add (memory.size) (table.size $tab))
                                 (call_indirect $tab (type $unary) (i32.const 9) (i32.const 0))))))

  (func (export "run_simd") (result i64)
    (local $v v128)
    (v128.store (i32.const 300) (v128.const i32x4 1 2 3 4))
    (local.set $v (i32x4.add (v128.load (i32.const 300)) (i32x4.splat (i32.const 10))))
    (local.set $v (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $v) (local.get $v)))
    (local.set $v (v128.load32_lane 2 (i32.const 300) (local.get $v)))
    (v128.store64_lane 1 (i32.const 400) (local.get $v))
    (local.set $v (i32x4.replace_lane 3 (local.get $v) (i32.const 99)))
    (i64.add
      (i64.add (i64.load (i32.const 400)) (i64.extend_i32_u (i32x4.extract_lane 0 (local.get $v))))
      (i64.add (i64.extend_i32_u (i32x4.extract_lane 3 (local.get $v)))
               (i64x2.extract_lane 0 (i64x2.extend_low_i32x4_u (i32x4.dot_i16x8_s (local.get $v) (local.get $v))))))))
