;; The sketch kernel of memory.sketch.ts: the SimHash sketch of one vector, bit for bit what the
;; plain computation gives (the same additions on each value, two values at a time: f64x2), in
;; less than half the time the same computation takes in JavaScript (bench/RESULTS.md).
;; memory.sketch-kernel.ts holds the assembled bytes; memory.wasm.test.ts assembles this file with
;; wabt and checks they match.
(module
  (memory (export "memory") 1)

  ;; The Walsh-Hadamard transform of the $p f64 at $a (p a power of two, at least 8) from its second
  ;; stage on (the caller does the first): stages h and 2h together while 4h <= p, then the last
  ;; one alone when log2(p) is even.
  (func $transform (param $a i32) (param $p i32)
    (local $h i32) (local $hb i32) (local $end i32) (local $i i32) (local $j i32) (local $stop i32)
    (local $x0 v128) (local $x1 v128) (local $x2 v128) (local $x3 v128)
    (local $y0 v128) (local $y1 v128) (local $y2 v128) (local $y3 v128)
    (local.set $end (i32.add (local.get $a) (i32.shl (local.get $p) (i32.const 3))))
    (local.set $h (i32.const 2))
    (block $done
      (loop $stages
        (br_if $done (i32.gt_u (i32.shl (local.get $h) (i32.const 2)) (local.get $p)))
        (local.set $hb (i32.shl (local.get $h) (i32.const 3)))
        (local.set $i (local.get $a))
        (loop $blocks
          (local.set $j (local.get $i))
          (local.set $stop (i32.add (local.get $i) (local.get $hb)))
          (loop $quads
            (local.set $x0 (v128.load (local.get $j)))
            (local.set $x1 (v128.load (i32.add (local.get $j) (local.get $hb))))
            (local.set $x2 (v128.load (i32.add (local.get $j) (i32.shl (local.get $hb) (i32.const 1)))))
            (local.set $x3 (v128.load (i32.add (local.get $j) (i32.mul (local.get $hb) (i32.const 3)))))
            (local.set $y0 (f64x2.add (local.get $x0) (local.get $x1)))
            (local.set $y1 (f64x2.sub (local.get $x0) (local.get $x1)))
            (local.set $y2 (f64x2.add (local.get $x2) (local.get $x3)))
            (local.set $y3 (f64x2.sub (local.get $x2) (local.get $x3)))
            (v128.store (local.get $j) (f64x2.add (local.get $y0) (local.get $y2)))
            (v128.store (i32.add (local.get $j) (local.get $hb)) (f64x2.add (local.get $y1) (local.get $y3)))
            (v128.store (i32.add (local.get $j) (i32.shl (local.get $hb) (i32.const 1)))
              (f64x2.sub (local.get $y0) (local.get $y2)))
            (v128.store (i32.add (local.get $j) (i32.mul (local.get $hb) (i32.const 3)))
              (f64x2.sub (local.get $y1) (local.get $y3)))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br_if $quads (i32.lt_u (local.get $j) (local.get $stop))))
          (local.set $i (i32.add (local.get $i) (i32.shl (local.get $hb) (i32.const 2))))
          (br_if $blocks (i32.lt_u (local.get $i) (local.get $end))))
        (local.set $h (i32.shl (local.get $h) (i32.const 2)))
        (br $stages)))
    (block $none
      (br_if $none (i32.ge_u (local.get $h) (local.get $p)))
      (local.set $hb (i32.shl (local.get $h) (i32.const 3)))
      (local.set $i (local.get $a))
      (loop $blocks
        (local.set $j (local.get $i))
        (local.set $stop (i32.add (local.get $i) (local.get $hb)))
        (loop $pairs
          (local.set $x0 (v128.load (local.get $j)))
          (local.set $x1 (v128.load (i32.add (local.get $j) (local.get $hb))))
          (v128.store (local.get $j) (f64x2.add (local.get $x0) (local.get $x1)))
          (v128.store (i32.add (local.get $j) (local.get $hb)) (f64x2.sub (local.get $x0) (local.get $x1)))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (br_if $pairs (i32.lt_u (local.get $j) (local.get $stop))))
        (local.set $i (i32.add (local.get $i) (i32.shl (local.get $hb) (i32.const 1))))
        (br_if $blocks (i32.lt_u (local.get $i) (local.get $end))))))

  ;; The sketch of the $p f64 at $in (zero past the vector's length): for each of $rounds rotations
  ;; ($p signs of ±1 each, one after another from $signs), a = in × signs, transformed (scratch at
  ;; $a), and a's signs written as bits, most significant first, from byte $out, until $bits bits.
  (func (export "sketch") (param $in i32) (param $p i32) (param $rounds i32) (param $signs i32)
      (param $a i32) (param $out i32) (param $bits i32)
    (local $pb i32) (local $r i32) (local $i i32) (local $bit i32) (local $x v128)
    (local.set $pb (i32.shl (local.get $p) (i32.const 3)))
    (block $finished
      (loop $rounds
        (br_if $finished (i32.ge_u (local.get $r) (local.get $rounds)))
        ;; a = in × signs with the transform's first stage in the same pass: [x0 + x1, x0 - x1] as
        ;; [x0, x0] + [x1, x1] × [1, -1] (a sign flip, exact, and x + -y is x - y).
        (local.set $i (i32.const 0))
        (loop $products
          (local.set $x (f64x2.mul (v128.load (i32.add (local.get $in) (local.get $i)))
                                   (v128.load (i32.add (local.get $signs) (local.get $i)))))
          (v128.store (i32.add (local.get $a) (local.get $i))
            (f64x2.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 (local.get $x) (local.get $x))
              (f64x2.mul
                (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $x) (local.get $x))
                (v128.const f64x2 1 -1))))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br_if $products (i32.lt_u (local.get $i) (local.get $pb))))
        (call $transform (local.get $a) (local.get $p))
        ;; Whole bytes, without branches (the signs are random: a branch per bit would be
        ;; mispredicted half the time); every round starts on a byte boundary.
        (local.set $i (local.get $a))
        (block $packed
          (loop $bytes
            (br_if $packed (i32.ge_u (local.get $i) (i32.add (local.get $a) (local.get $pb))))
            (br_if $packed (i32.ge_u (local.get $bit) (local.get $bits)))
            (i32.store8 (i32.add (local.get $out) (i32.shr_u (local.get $bit) (i32.const 3)))
              (i32.or
                (i32.or
                  (i32.or (i32.shl (f64.gt (f64.load (local.get $i)) (f64.const 0)) (i32.const 7))
                          (i32.shl (f64.gt (f64.load offset=8 (local.get $i)) (f64.const 0)) (i32.const 6)))
                  (i32.or (i32.shl (f64.gt (f64.load offset=16 (local.get $i)) (f64.const 0)) (i32.const 5))
                          (i32.shl (f64.gt (f64.load offset=24 (local.get $i)) (f64.const 0)) (i32.const 4))))
                (i32.or
                  (i32.or (i32.shl (f64.gt (f64.load offset=32 (local.get $i)) (f64.const 0)) (i32.const 3))
                          (i32.shl (f64.gt (f64.load offset=40 (local.get $i)) (f64.const 0)) (i32.const 2)))
                  (i32.or (i32.shl (f64.gt (f64.load offset=48 (local.get $i)) (f64.const 0)) (i32.const 1))
                          (f64.gt (f64.load offset=56 (local.get $i)) (f64.const 0))))))
            (local.set $i (i32.add (local.get $i) (i32.const 64)))
            (local.set $bit (i32.add (local.get $bit) (i32.const 8)))
            (br $bytes)))
        (local.set $signs (i32.add (local.get $signs) (local.get $pb)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rounds)))))
