;; NumPy's PCG64 (XSL-RR 128/64) with buffered 32-bit output and the 32-bit Lemire bounded sampler,
;; for drawing bootstrap indices fast. Mirrors src/stats/numpy-random.ts, which is the reference (tests compare).
;; Build: node scripts/build-wasm.mjs (writes src/stats/pcg64-wasm.ts).
(module
  (memory (export "memory") 64) ;; 4 MiB: one chunk of 1,048,576 int32 draws
  (global $s_hi (mut i64) (i64.const 0))
  (global $s_lo (mut i64) (i64.const 0))
  (global $i_hi (mut i64) (i64.const 0))
  (global $i_lo (mut i64) (i64.const 0))
  (global $has32 (mut i32) (i32.const 0))
  (global $buf32 (mut i32) (i32.const 0))
  ;; multiplier 0x2360ED051FC65DA4_4385DF649FCCF645
  (global $m_hi i64 (i64.const 0x2360ED051FC65DA4))
  (global $m_lo i64 (i64.const 0x4385DF649FCCF645))

  (func (export "setState") (param $shi i64) (param $slo i64) (param $ihi i64) (param $ilo i64) (param $has i32) (param $buf i32)
    (global.set $s_hi (local.get $shi))
    (global.set $s_lo (local.get $slo))
    (global.set $i_hi (local.get $ihi))
    (global.set $i_lo (local.get $ilo))
    (global.set $has32 (local.get $has))
    (global.set $buf32 (local.get $buf)))

  (func (export "stateHi") (result i64) (global.get $s_hi))
  (func (export "stateLo") (result i64) (global.get $s_lo))
  (func (export "has32") (result i32) (global.get $has32))
  (func (export "buf32") (result i32) (global.get $buf32))

  ;; high 64 bits of the unsigned 128-bit product a * b
  (func $mulhi (param $a i64) (param $b i64) (result i64)
    (local $a0 i64) (local $a1 i64) (local $b0 i64) (local $b1 i64)
    (local $p0 i64) (local $p1 i64) (local $p2 i64) (local $mid i64)
    (local.set $a0 (i64.and (local.get $a) (i64.const 0xffffffff)))
    (local.set $a1 (i64.shr_u (local.get $a) (i64.const 32)))
    (local.set $b0 (i64.and (local.get $b) (i64.const 0xffffffff)))
    (local.set $b1 (i64.shr_u (local.get $b) (i64.const 32)))
    (local.set $p0 (i64.mul (local.get $a0) (local.get $b0)))
    (local.set $p1 (i64.mul (local.get $a0) (local.get $b1)))
    (local.set $p2 (i64.mul (local.get $a1) (local.get $b0)))
    (local.set $mid (i64.add (i64.add (i64.shr_u (local.get $p0) (i64.const 32))
                                      (i64.and (local.get $p1) (i64.const 0xffffffff)))
                             (i64.and (local.get $p2) (i64.const 0xffffffff))))
    (i64.add (i64.add (i64.mul (local.get $a1) (local.get $b1))
                      (i64.add (i64.shr_u (local.get $p1) (i64.const 32)) (i64.shr_u (local.get $p2) (i64.const 32))))
             (i64.shr_u (local.get $mid) (i64.const 32))))

  ;; state = state * multiplier + inc (mod 2^128), then the XSL-RR output
  (func $next64 (result i64)
    (local $plo i64) (local $lo i64) (local $hi i64)
    (local.set $plo (i64.mul (global.get $s_lo) (global.get $m_lo)))
    (local.set $lo (i64.add (local.get $plo) (global.get $i_lo)))
    (local.set $hi
      (i64.add
        (i64.add
          (i64.add (call $mulhi (global.get $s_lo) (global.get $m_lo))
                   (i64.mul (global.get $s_hi) (global.get $m_lo)))
          (i64.add (i64.mul (global.get $s_lo) (global.get $m_hi)) (global.get $i_hi)))
        (i64.extend_i32_u (i64.lt_u (local.get $lo) (local.get $plo)))))
    (global.set $s_lo (local.get $lo))
    (global.set $s_hi (local.get $hi))
    (i64.rotr (i64.xor (local.get $hi) (local.get $lo)) (i64.shr_u (local.get $hi) (i64.const 58))))

  (func $next32 (result i32)
    (local $v i64)
    (if (global.get $has32)
      (then
        (global.set $has32 (i32.const 0))
        (return (global.get $buf32))))
    (local.set $v (call $next64))
    (global.set $has32 (i32.const 1))
    (global.set $buf32 (i32.wrap_i64 (i64.shr_u (local.get $v) (i64.const 32))))
    (i32.wrap_i64 (local.get $v)))

  ;; `count` draws uniform in [0, n) (n >= 2, n - 1 < 0xffffffff) into memory at offset 0
  (func (export "choice") (param $n i32) (param $count i32)
    (local $i i32) (local $excl i64) (local $m i64) (local $threshold i64)
    (local.set $excl (i64.extend_i32_u (local.get $n)))
    (local.set $threshold (i64.rem_u (i64.sub (i64.const 0xffffffff) (i64.sub (local.get $excl) (i64.const 1))) (local.get $excl)))
    (block $done
      (loop $draw
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $m (i64.mul (i64.extend_i32_u (call $next32)) (local.get $excl)))
        (if (i64.lt_u (i64.and (local.get $m) (i64.const 0xffffffff)) (local.get $excl))
          (then
            (block $accepted
              (loop $retry
                (br_if $accepted (i64.ge_u (i64.and (local.get $m) (i64.const 0xffffffff)) (local.get $threshold)))
                (local.set $m (i64.mul (i64.extend_i32_u (call $next32)) (local.get $excl)))
                (br $retry)))))
        (i32.store (i32.shl (local.get $i) (i32.const 2)) (i32.wrap_i64 (i64.shr_u (local.get $m) (i64.const 32))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $draw)))))
