;; The inner loops of src/stats/weighted-sums.ts (which is the reference, and the fallback), for the paired bootstrap:
;; a resample's draws become multiplicities over rows, then each lane's sum is a dot product over the drawn rows in
;; ascending order. SIMD takes two lanes at once; each lane still computes acc + w * x with a rounding after the
;; multiply and after the add, in the same order, exactly as the scalar loop does.
;; Build: node scripts/build-wasm.mjs (writes src/stats/weighted-sums-wasm.ts).
(module
  (memory (export "memory") 1)

  ;; counts[0..n) = multiplicities of draws[0..n); rows[0..m) = the drawn rows ascending, weights[0..m) their
  ;; multiplicities as f64; returns m. Pointers are byte offsets; draws are in [0, n).
  (func (export "multiplicities") (param $draws i32) (param $n i32) (param $counts i32) (param $rows i32) (param $weights i32) (result i32)
    (local $r i32) (local $p i32) (local $c i32) (local $m i32)
    (memory.fill (local.get $counts) (i32.const 0) (i32.shl (local.get $n) (i32.const 2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $r) (local.get $n)))
        (local.set $p (i32.add (local.get $counts)
          (i32.shl (i32.load (i32.add (local.get $draws) (i32.shl (local.get $r) (i32.const 2)))) (i32.const 2))))
        (i32.store (local.get $p) (i32.add (i32.load (local.get $p)) (i32.const 1)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $next)))
    ;; compaction without a branch: every row is written, the cursor moves only past drawn ones
    (local.set $r (i32.const 0))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $r) (local.get $n)))
        (local.set $c (i32.load (i32.add (local.get $counts) (i32.shl (local.get $r) (i32.const 2)))))
        (i32.store (i32.add (local.get $rows) (i32.shl (local.get $m) (i32.const 2))) (local.get $r))
        (f64.store (i32.add (local.get $weights) (i32.shl (local.get $m) (i32.const 3))) (f64.convert_i32_u (local.get $c)))
        (local.set $m (i32.add (local.get $m) (i32.ne (local.get $c) (i32.const 0))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $next)))
    (local.get $m))

  ;; out[0..14) = sum over j < m of weights[j] * packed[rows[j] * stride + lane .. + 14), accumulated from 0 in
  ;; ascending j. stride and lane are in bytes (multiples of 16).
  (func (export "dot14") (param $m i32) (param $rows i32) (param $weights i32) (param $packed i32) (param $stride i32) (param $lane i32) (param $out i32)
    (local $j i32) (local $w v128) (local $p i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $a4 v128) (local $a5 v128) (local $a6 v128)
    (local.set $packed (i32.add (local.get $packed) (local.get $lane)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $m)))
        (local.set $w (f64x2.splat (f64.load (i32.add (local.get $weights) (i32.shl (local.get $j) (i32.const 3))))))
        (local.set $p (i32.add (local.get $packed)
          (i32.mul (i32.load (i32.add (local.get $rows) (i32.shl (local.get $j) (i32.const 2)))) (local.get $stride))))
        (local.set $a0 (f64x2.add (local.get $a0) (f64x2.mul (local.get $w) (v128.load offset=0 (local.get $p)))))
        (local.set $a1 (f64x2.add (local.get $a1) (f64x2.mul (local.get $w) (v128.load offset=16 (local.get $p)))))
        (local.set $a2 (f64x2.add (local.get $a2) (f64x2.mul (local.get $w) (v128.load offset=32 (local.get $p)))))
        (local.set $a3 (f64x2.add (local.get $a3) (f64x2.mul (local.get $w) (v128.load offset=48 (local.get $p)))))
        (local.set $a4 (f64x2.add (local.get $a4) (f64x2.mul (local.get $w) (v128.load offset=64 (local.get $p)))))
        (local.set $a5 (f64x2.add (local.get $a5) (f64x2.mul (local.get $w) (v128.load offset=80 (local.get $p)))))
        (local.set $a6 (f64x2.add (local.get $a6) (f64x2.mul (local.get $w) (v128.load offset=96 (local.get $p)))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $next)))
    (v128.store offset=0 (local.get $out) (local.get $a0))
    (v128.store offset=16 (local.get $out) (local.get $a1))
    (v128.store offset=32 (local.get $out) (local.get $a2))
    (v128.store offset=48 (local.get $out) (local.get $a3))
    (v128.store offset=64 (local.get $out) (local.get $a4))
    (v128.store offset=80 (local.get $out) (local.get $a5))
    (v128.store offset=96 (local.get $out) (local.get $a6))))
