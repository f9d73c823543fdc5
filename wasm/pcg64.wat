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

  ;; `count` draws uniform in [0, n) (n >= 2, n - 1 < 0xffffffff) into memory at offset 0: PCG64's step, its
  ;; XSL-RR output and the buffered 32-bit halves (Pcg64.next32 in numpy-random.ts), written out in one loop over
  ;; locals, since calls and global reads cost more than the arithmetic. Lemire's rejection: a draw whose low word is below (2^32 - n) mod n is drawn again (that bound is
  ;; below n, so NumPy's first test, low word < n, only saves computing it).
  (func (export "choice") (param $n i32) (param $count i32)
    (local $i i32) (local $excl i64) (local $m i64) (local $threshold i64)
    (local $shi i64) (local $slo i64) (local $ihi i64) (local $ilo i64) (local $has i32) (local $buf i32)
    (local $u i32) (local $v i64) (local $plo i64) (local $lo i64) (local $hi i64)
    (local $a0 i64) (local $a1 i64) (local $p0 i64) (local $p1 i64) (local $p2 i64) (local $mid i64)
    (local.set $excl (i64.extend_i32_u (local.get $n)))
    (local.set $threshold (i64.rem_u (i64.sub (i64.const 0xffffffff) (i64.sub (local.get $excl) (i64.const 1))) (local.get $excl)))
    (local.set $shi (global.get $s_hi))
    (local.set $slo (global.get $s_lo))
    (local.set $ihi (global.get $i_hi))
    (local.set $ilo (global.get $i_lo))
    (local.set $has (global.get $has32))
    (local.set $buf (global.get $buf32))
    (block $done
      (loop $draw
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (if (local.get $has)
          (then
            (local.set $has (i32.const 0))
            (local.set $u (local.get $buf)))
          (else
            ;; next64: state = state * multiplier + inc, XSL-RR output
            (local.set $plo (i64.mul (local.get $slo) (global.get $m_lo)))
            (local.set $lo (i64.add (local.get $plo) (local.get $ilo)))
            ;; high word of slo * m_lo (m_lo = 0x4385DF64_9FCCF645)
            (local.set $a0 (i64.and (local.get $slo) (i64.const 0xffffffff)))
            (local.set $a1 (i64.shr_u (local.get $slo) (i64.const 32)))
            (local.set $p0 (i64.mul (local.get $a0) (i64.const 0x9FCCF645)))
            (local.set $p1 (i64.mul (local.get $a0) (i64.const 0x4385DF64)))
            (local.set $p2 (i64.mul (local.get $a1) (i64.const 0x9FCCF645)))
            (local.set $mid (i64.add (i64.add (i64.shr_u (local.get $p0) (i64.const 32))
                                              (i64.and (local.get $p1) (i64.const 0xffffffff)))
                                     (i64.and (local.get $p2) (i64.const 0xffffffff))))
            (local.set $hi
              (i64.add
                (i64.add
                  (i64.add
                    (i64.add (i64.add (i64.mul (local.get $a1) (i64.const 0x4385DF64))
                                      (i64.add (i64.shr_u (local.get $p1) (i64.const 32)) (i64.shr_u (local.get $p2) (i64.const 32))))
                             (i64.shr_u (local.get $mid) (i64.const 32)))
                    (i64.mul (local.get $shi) (global.get $m_lo)))
                  (i64.add (i64.mul (local.get $slo) (global.get $m_hi)) (local.get $ihi)))
                (i64.extend_i32_u (i64.lt_u (local.get $lo) (local.get $plo)))))
            (local.set $slo (local.get $lo))
            (local.set $shi (local.get $hi))
            (local.set $v (i64.rotr (i64.xor (local.get $hi) (local.get $lo)) (i64.shr_u (local.get $hi) (i64.const 58))))
            ;; next32: the low half now, the high half buffered
            (local.set $has (i32.const 1))
            (local.set $buf (i32.wrap_i64 (i64.shr_u (local.get $v) (i64.const 32))))
            (local.set $u (i32.wrap_i64 (local.get $v)))))
        (local.set $m (i64.mul (i64.extend_i32_u (local.get $u)) (local.get $excl)))
        (br_if $draw (i64.lt_u (i64.and (local.get $m) (i64.const 0xffffffff)) (local.get $threshold)))
        (i32.store (i32.shl (local.get $i) (i32.const 2)) (i32.wrap_i64 (i64.shr_u (local.get $m) (i64.const 32))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $draw)))
    (global.set $s_hi (local.get $shi))
    (global.set $s_lo (local.get $slo))
    (global.set $has32 (local.get $has))
    (global.set $buf32 (local.get $buf))))
