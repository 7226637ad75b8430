;; The word-vector dot products of platform/models/words.ts: the dot product of the query row (int8,
;; `chunks` × 16 bytes from byte 0, zero past the vector's end) with each of `count` rows of the
;; table (int8, `dims` bytes each, from byte `table`), the rows named by i32 indices from byte
;; `list`, written as i32 from byte `out` (a negative index: 0). Sixteen products at a time
;; (i8x16 multiplied into i16x8 halves, added pairwise into i32x4); a row is read past its end
;; into the next one's bytes, which meet the query's zeros.
(module
  (memory (export "memory") 1)
  (func (export "dots") (param $chunks i32) (param $table i32) (param $dims i32) (param $list i32)
    (param $count i32) (param $out i32)
    (local $i i32) (local $row i32) (local $p i32) (local $q i32) (local $end i32)
    (local $a v128) (local $b v128) (local $acc v128)
    (local.set $end (i32.shl (local.get $chunks) (i32.const 4)))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $row (i32.load (i32.add (local.get $list) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (if (i32.ge_s (local.get $row) (i32.const 0))
          (then
            (local.set $p (i32.add (local.get $table) (i32.mul (local.get $row) (local.get $dims))))
            (local.set $q (i32.const 0))
            (loop $cols
              (local.set $a (v128.load (local.get $q)))
              (local.set $b (v128.load (local.get $p)))
              (local.set $acc
                (i32x4.add (local.get $acc)
                  (i32x4.add
                    (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_low_i8x16_s (local.get $a) (local.get $b)))
                    (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_high_i8x16_s (local.get $a) (local.get $b))))))
              (local.set $p (i32.add (local.get $p) (i32.const 16)))
              (local.set $q (i32.add (local.get $q) (i32.const 16)))
              (br_if $cols (i32.lt_u (local.get $q) (local.get $end))))))
        (i32.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows)))))
