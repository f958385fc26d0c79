//! Instruction coverage: each kernel of `sim_ops.cu` exercises one family
//! (integer and float arithmetic, libdevice, warp primitives, atomics,
//! vectors, calls, local and constant memory, printf, reducing barriers,
//! dynamic shared memory, 3-D indices, parallel phis) and its results are
//! recomputed here on the CPU.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::sim::{ArgValue, BufferSpec, Elem, Init, LaunchConfig};

const FIXTURE: &str = "tests/fixtures/cu/sim_ops.cu";

fn warp() -> LaunchConfig {
    launch([1, 1, 1], [32, 1, 1])
}

fn typed(name: &str, bytes: u64, init: Init, elem: Elem) -> (String, ArgValue) {
    (
        name.to_string(),
        ArgValue::Buffer(BufferSpec {
            bytes,
            init,
            elem: Some(elem),
        }),
    )
}

fn doubles(o: &warpcheck::sim::Outcome, name: &str) -> Vec<f64> {
    o.buffer(name)
        .unwrap()
        .data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// PTX `prmt` (what `__byte_perm` lowers to), written from the ISA manual.
fn prmt(a: u32, b: u32, s: u32) -> u32 {
    let bytes = (u64::from(b) << 32) | u64::from(a);
    (0..4).fold(0, |acc, i| {
        let sel = (s >> (4 * i)) & 0xf;
        let byte = ((bytes >> (8 * (sel & 7))) & 0xff) as u32;
        let byte = if sel & 8 == 0 {
            byte
        } else if byte & 0x80 != 0 {
            0xff
        } else {
            0
        };
        acc | (byte << (8 * i))
    })
}

#[test]
fn integer_arithmetic_wraps_and_keeps_signedness() {
    let m = compile(FIXTURE);
    let (a, b) = (123_456_789i32, 3i32);
    let o = run(
        &m,
        "int_arith",
        &warp(),
        &[
            buf("out", 16 * 128, Init::Zero),
            int("a", a.into()),
            int("b", b.into()),
        ],
    );
    let out = ints(&o, "out");
    for t in 0..32i32 {
        let ua = (a as u32).wrapping_add(t as u32);
        let x = a - 37 * t;
        let d = b + t;
        let w = i64::from(x) * i64::from(a) + i64::from(t);
        let mulhi = ((i64::from(x) * i64::from(a)) >> 32) as i32;
        let umulhi = ((u64::from(ua) * 0x9e37_79b9) >> 32) as u32;
        let expect = [
            x / d,
            x % d,
            (ua / d as u32) as i32,
            (ua % d as u32) as i32,
            x >> (t % 31),
            (ua >> (t % 31)) as i32,
            (ua << (t % 31)) as i32,
            i32::from(ua.wrapping_mul(7) as i8),
            i32::from(ua.wrapping_mul(1001) as u16),
            x.max(-t) + x.min(t) + x.abs(),
            ua.count_ones() as i32
                + 100 * x.leading_zeros() as i32
                + 10000 * (x.trailing_zeros() as i32 + 1),
            ua.reverse_bits() as i32,
            prmt(ua, x as u32, 0x5140 + t as u32) as i32,
            mulhi.wrapping_add(umulhi as i32),
            ((w >> 20) as i32) ^ ((w / 12345) as i32),
            ((w as u64) % 1_000_003) as i32,
        ];
        for (k, e) in expect.iter().enumerate() {
            assert_eq!(out[k * 32 + t as usize], *e, "row {k}, thread {t}");
        }
    }
}

#[test]
fn float_math_and_libdevice() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "float_math",
        &warp(),
        &[
            buf("out", 8 * 128, Init::Zero),
            buf("dout", 2 * 256, Init::Zero),
            float("x", 1.0),
        ],
    );
    let (out, dout) = (floats(&o, "out"), doubles(&o, "dout"));
    let close = |got: f32, want: f32, what: &str| {
        assert!(
            (got - want).abs() <= 1e-5 * want.abs().max(1.0),
            "{what}: {got} != {want}"
        );
    };
    for t in 0..32usize {
        let v = 1.0f32 + 0.25 * t as f32;
        let row = |k: usize| out[k * 32 + t];
        close(
            row(0),
            v.sqrt() + (-v).exp() + v.sin() * v.cos(),
            "sqrt exp sin cos",
        );
        close(
            row(1),
            v.powf(1.5) - (v + 1.0).ln() + v.mul_add(v, -v),
            "pow log fma",
        );
        let rounded = v.min(3.0) + v.max(3.0) + v.floor() + v.ceil() + v.trunc() + v.round();
        close(row(2), rounded, "min max rounding");
        let special = 1.0 / (v + 1.0).sqrt()
            + erf(f64::from(v / 8.0)) as f32
            + (v / 4.0).tanh()
            + v.atan2(2.0);
        close(row(3), special, "rsqrt erf tanh atan2");
        let conv = (v * 10.0).round_ties_even() + (-v).trunc() + v.floor();
        assert_eq!(row(4), conv, "float2int_rn, _rz, float2uint_rd at {t}");
        let misc = (v / 8.0).clamp(0.0, 1.0) + v + (-v) + v % 1.5;
        close(row(5), misc, "saturate fabs copysign fmod");
        // Every v = 1 + t/4 and 3v are exact in half: v + 3v.
        assert_eq!(row(6), 4.0 * v, "half at {t}");
        assert_eq!(row(7), if v > 3.0 { v / 3.0 } else { -v });
        let d = f64::from(v);
        let e0 = d.exp() + (d + 1.0).ln() + d.sqrt() + d.powf(0.5) + (d * 3.0).floor();
        assert!((dout[t] - e0).abs() < 1e-12 * e0, "doubles at {t}");
        let e1 = ((d * 1e10) as i64) as f64 + f64::from((d * 1000.0) as u32);
        assert_eq!(dout[32 + t], e1);
    }
}

/// erf for the reference (std has none): the series, ample for |x| < 2.
fn erf(x: f64) -> f64 {
    let mut sum = 0.0;
    let mut term = x;
    for n in 0..60 {
        sum += term / (2 * n + 1) as f64;
        term *= -x * x / (n + 1) as f64;
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

#[test]
fn shuffles_votes_matches_and_reductions() {
    let m = compile(FIXTURE);
    let o = run(&m, "warp_ops", &warp(), &[buf("out", 10 * 128, Init::Zero)]);
    let out = ints(&o, "out");
    let v = |t: usize| (t * 10 + 1) as i32;
    let ballot = (0..32).filter(|t| t % 3 == 0).fold(0u32, |m, t| m | 1 << t);
    for t in 0..32usize {
        let row = |k: usize| out[k * 32 + t];
        assert_eq!(row(0), v(5), "shfl idx");
        assert_eq!(row(1), if t >= 3 { v(t - 3) } else { v(t) }, "shfl up");
        assert_eq!(
            row(2),
            if t % 8 + 4 < 8 { v(t + 4) } else { v(t) },
            "shfl down width 8"
        );
        assert_eq!(row(3), v(t ^ 1), "shfl xor width 16");
        assert_eq!(row(4) as u32, ballot, "ballot");
        assert_eq!(row(5), 1, "any(t == 7) + 2 all(t < 31)");
        assert_eq!(row(6) as u32, 0xffu32 << (8 * (t / 8)), "match any");
        assert_eq!(row(7), 496, "reduce add");
        // A double shuffles as two 32-bit halves: 0.5 (t ^ 2) * 2.
        assert_eq!(row(8), (t ^ 2) as i32, "64-bit shuffle");
        // Inside `if (t % 2)` only the odd lanes are active, and vice versa.
        let active = if t % 2 == 1 {
            0xaaaa_aaaau32 as i32
        } else {
            -(0x5555_5555)
        };
        assert_eq!(row(9), active, "activemask at {t}");
    }
}

#[test]
fn atomics_apply_in_lane_order() {
    let m = compile(FIXTURE);
    let mut init = vec![0i32; 64];
    init[2] = -100;
    init[3] = 100;
    init[6] = -1;
    let o = run(
        &m,
        "atomics",
        &warp(),
        &[
            data("i", i32_bytes(&init)),
            buf("u", 12, Init::Zero),
            buf("f", 4, Init::Zero),
            buf("l", 8, Init::Zero),
        ],
    );
    let i = ints(&o, "i");
    // Sum of 0..31 = 496; xor of 0..31 = 0; t % 31 covers bits 0..30.
    assert_eq!(
        &i[..10],
        &[496, -496, -9, 9, 31, 100, i32::MIN, i32::MAX, 0, 64]
    );
    let u = ints(&o, "u");
    // atomicInc(.., 10) counts modulo 11: 32 mod 11 = 10. atomicDec(.., 5)
    // from 0 goes 5, 4, 3, 2, 1, 0, 5, ...: after 32 steps, 4.
    assert_eq!(u, vec![10, 4, 93]);
    assert_eq!(floats(&o, "f"), vec![248.0]);
    let l = u64::from_le_bytes(o.buffer("l").unwrap().data[..8].try_into().unwrap());
    assert_eq!(l, 32 << 33);
    // The `__device__ int counter` hands out tickets 0..31 in lane order.
    assert!((0..32).all(|t| i[32 + t] == t as i32));
    let site = site(&m, &o, "atomic", 79);
    assert_eq!((site.executions, site.nonuniform), (1, 0));
}

#[test]
fn vectors_load_shuffle_and_store() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "vectors",
        &warp(),
        &[
            buf("in", 512, Init::Iota),
            buf("out", 512, Init::Zero),
            typed("vin", 512, Init::Iota, Elem::F32),
            buf("vout", 512, Init::Zero),
        ],
    );
    let (out, vout) = (floats(&o, "out"), floats(&o, "vout"));
    for t in 0..32usize {
        let e = |k: usize| (4 * t + k) as f32;
        assert_eq!(&out[4 * t..4 * t + 4], &[e(3), e(2), e(1), e(0)]);
        let want = [
            2.0 * e(3) + e(0),
            2.0 * e(2) + e(0),
            2.0 * e(1) + e(1),
            2.0 * e(0) + e(1),
        ];
        assert_eq!(&vout[4 * t..4 * t + 4], &want);
    }
    // The __ldg of a float4 is one 16-byte access per lane: 16 sectors.
    let ldg = site(&m, &o, "load", 87);
    assert_eq!(ldg.sectors.unwrap().max, 16);
}

#[test]
fn device_calls_recurse_per_lane_and_return_structs() {
    let m = compile(FIXTURE);
    let o = run(&m, "calls", &warp(), &[buf("out", 256, Init::Zero)]);
    let out = ints(&o, "out");
    let fact = |n: i32| (1..=n).product::<i32>();
    for t in 0..32i32 {
        assert_eq!(out[t as usize], fact(t % 8), "factorial at {t}");
        let v = i64::from(t) * 100_000;
        assert_eq!(out[32 + t as usize], (v & 0xffff) as i32 + (v >> 16) as i32);
    }
}

#[test]
fn local_arrays_memcpy_and_memset() {
    let m = compile(FIXTURE);
    let k = 5;
    let o = run(
        &m,
        "locals",
        &warp(),
        &[
            buf("out", 128, Init::Zero),
            typed("recs", 32 * 24, Init::Iota, Elem::I32),
            int("k", k),
        ],
    );
    let out = ints(&o, "out");
    for t in 0..32i32 {
        let j = (k as i32 + t) % 16;
        let buf = if (8..12).contains(&j) { 0 } else { j * t };
        assert_eq!(out[t as usize], buf + 6 * t + t % 6, "thread {t}");
    }
}

#[test]
fn constant_and_device_variables_keep_their_initializers() {
    let m = compile(FIXTURE);
    let o = run(&m, "constants", &warp(), &[buf("out", 128, Init::Zero)]);
    let table = [1.5f32, 2.5, 3.5, 4.5];
    let out = floats(&o, "out");
    assert!((0..32).all(|t| out[t] == table[t % 4] * 7.0));
    // One load from `__constant__` memory, one from the `__device__` variable.
    let mut spaces: Vec<_> = sites(&m, &o, "load", 134).iter().map(|s| s.space).collect();
    spaces.sort();
    assert_eq!(spaces, vec![Some("constant"), Some("global")]);
}

#[test]
fn printf_formats_each_active_lane() {
    let m = compile(FIXTURE);
    let o = run(&m, "prints", &warp(), &[int("n", 3)]);
    assert_eq!(
        o.output,
        vec!["thread 0 of 3: 0.00 ok\n", "thread 1 of 3: 0.50 ok\n"]
    );
}

#[test]
fn reducing_barriers_count_across_warps() {
    let m = compile(FIXTURE);
    // 96 threads in 3 warps: 32 have t % 3 == 0; not all t < 64; one t == 5.
    let o = run(
        &m,
        "sync_reductions",
        &launch([1, 1, 1], [96, 1, 1]),
        &[buf("out", 384, Init::Zero)],
    );
    assert!(ints(&o, "out").iter().all(|&v| v == 32 + 10000));
}

#[test]
fn dynamic_shared_memory_has_the_requested_size() {
    let m = compile(FIXTURE);
    let config = LaunchConfig {
        dynamic_shared: 256,
        ..launch([1, 1, 1], [64, 1, 1])
    };
    let o = run(
        &m,
        "dynamic_shared",
        &config,
        &[buf("out", 256, Init::Zero)],
    );
    let out = floats(&o, "out");
    assert!((0..64).all(|t| out[t] == (63 - t) as f32 * 2.0));
    // Without the bytes, thread 0's store is outside the window.
    let e = try_run(
        &m,
        "dynamic_shared",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("out", 256, Init::Zero)],
    )
    .unwrap_err();
    assert!(e.message.contains("shared"), "{e}");
}

#[test]
fn three_dimensional_indices_number_threads_x_fastest() {
    let m = compile(FIXTURE);
    // Blocks of 4 x 4 x 2 = 32 threads (one warp); a 2 x 1 x 2 grid.
    let o = run(
        &m,
        "indices",
        &launch([2, 1, 2], [4, 4, 2]),
        &[buf("out", 4 * 64 * 4, Init::Zero)],
    );
    let out = ints(&o, "out");
    for block in 0..4 {
        for linear in 0..32 {
            let (x, y, z) = (linear % 4, (linear / 4) % 4, linear / 16);
            let want = x + 10 * y + 100 * z + 1000 * block;
            assert_eq!(out[(block * 64 + linear) as usize], want);
        }
    }
    assert_eq!(o.warps.len(), 4);
    assert_eq!(o.blocks[3].block, [1, 0, 1]);
}

#[test]
fn phis_copy_in_parallel() {
    let m = compile(FIXTURE);
    // Each round maps (a, b) to (b, a + 1); clang unrolls by 8 and leaves
    // a remainder loop whose phis swap.
    let rounds = 11;
    let o = run(
        &m,
        "swaps",
        &warp(),
        &[buf("out", 128, Init::Zero), int("rounds", rounds)],
    );
    let out = ints(&o, "out");
    for t in 0..32 {
        let (mut a, mut b) = (t, 100 + t);
        for _ in 0..rounds {
            (a, b) = (b, a + 1);
        }
        assert_eq!(out[t as usize], a * 1000 + b, "thread {t}");
    }
}

#[test]
fn fences_warp_syncs_and_sleeps_are_no_ops() {
    let m = compile(FIXTURE);
    let o = run(&m, "hints", &warp(), &[buf("out", 128, Init::Zero)]);
    assert!(ints(&o, "out").iter().all(|&v| v == 2));
}
