"""flysim.gym: the Gymnasium environments over a flysim.Batch (FlyWalkVectorEnv, FlyWalkEnv).

Run as `PYTHONPATH=<build>/python python -m pytest python/tests` (needs gymnasium and
h5py; skipped without them or without the assets). The assets come from FLYSIM_ASSETS
(default <source>/assets). Sized for a 2-core machine: about 35,000 world-steps in all
(about 5 s).
"""
import os
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("h5py")
import mujoco  # noqa: E402

import flysim  # noqa: E402
import flysim.gym as fg  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASSETS = os.environ.get("FLYSIM_ASSETS", os.path.join(ROOT, "assets"))
MESH = os.path.join(ASSETS, "mesh.mjb")
CLIP = os.path.join(ASSETS, "walking_clip.h5")
NOBS = 42 + 42 + 3 + 4 + 18


@pytest.fixture(scope="module")
def paths():
    if not (os.path.exists(MESH) and os.path.exists(CLIP)):
        pytest.skip(f"no {MESH} or {CLIP} (scripts/setup.sh exports them)")
    return {"model": MESH, "clip": CLIP}


def make(paths, n, **kw):
    kw.setdefault("threads", 2)
    return fg.FlyWalkVectorEnv(n, paths["model"], paths["clip"], **kw)


def keyframe_obs(env):
    """The observation of a world at the keyframe "neutral" (float32, contact zero)."""
    m = env.model
    key = m.key("neutral")
    s = env.obs_slices
    o = np.zeros(NOBS, np.float32)
    o[s["joint_pos"]] = key.qpos[env._jq]
    o[s["joint_vel"]] = key.qvel[env._jv]
    o[s["thorax_pos"]] = key.qpos[0:3]
    o[s["thorax_quat"]] = key.qpos[3:7]
    return o


def clip_actions(env, info):
    """The clip's rows at each world's time after the next step: the reference policy."""
    rows = (info["clip_row"] + env.control_substeps) % len(env.clip)
    return env.clip[rows].astype(np.float32)


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


# gymnasium 1.4 has no checker for vector envs (gymnasium.utils.env_checker.check_env takes
# a gymnasium.Env): check_env runs on FlyWalkEnv, the same env over a 1-world batch.
def test_check_env_single_world(paths):
    from gymnasium.utils.env_checker import check_env
    direct = fg.FlyWalkEnv(paths["model"], paths["clip"], episode_steps=50, threads=1)
    made = gym.make(fg.ENV_ID, episode_steps=50, threads=1, **paths)  # with a spec: the
    assert isinstance(made.unwrapped, fg.FlyWalkEnv)  # seeded-reset checks are exact
    for env in (direct, made.unwrapped):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unbounded observation Box, radian actions
            check_env(env, skip_render_check=True)
    env = made
    obs, info = env.reset(seed=1)
    assert obs.shape == (NOBS,) and obs.dtype == np.float32
    obs, r, term, trunc, info = env.step(env.action_space.sample())
    assert isinstance(r, float) and 0 <= r <= 1 and term is False and trunc is False
    assert set(info) == {"clip_row", "fell", "unstable", "problems"}
    for e in (direct, made):
        e.close()
        e.close()  # twice is allowed


def test_make_vec_entry_point(paths):
    env = gym.make_vec(fg.ENV_ID, 3, vectorization_mode="vector_entry_point", **paths,
                       episode_steps=5, threads=1)
    assert isinstance(env.unwrapped, fg.FlyWalkVectorEnv) and env.num_envs == 3
    obs, _ = env.reset(seed=0)
    obs, r, *_ = env.step(env.action_space.sample())
    assert obs.shape == (3, NOBS) and r.shape == (3,)
    env.close()


def test_vector_spaces_and_contract(paths):
    n = 8
    env = make(paths, n, episode_steps=100)
    assert isinstance(env, gym.vector.VectorEnv) and env.num_envs == n
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    so, sa = env.single_observation_space, env.single_action_space
    assert isinstance(so, gym.spaces.Box) and so.shape == (NOBS,) and so.dtype == np.float32
    assert isinstance(sa, gym.spaces.Box) and sa.shape == (42,) and sa.dtype == np.float32
    assert env.observation_space.shape == (n, NOBS) and env.action_space.shape == (n, 42)
    assert (sa.low >= -np.pi).all() and (sa.high <= np.pi).all()
    assert (sa.low <= env.clip.min(0)).all() and (sa.high >= env.clip.max(0)).all()
    covered = sorted(i for s in env.obs_slices.values() for i in range(NOBS)[s])
    assert covered == list(range(NOBS))

    obs, info = env.reset(seed=0)
    assert obs.shape == (n, NOBS) and obs.dtype == np.float32 and obs in env.observation_space
    # the reset is the keyframe, to the bit of its float32
    assert np.array_equal(obs, np.tile(keyframe_obs(env), (n, 1)))
    for k in ("clip_row", "fell", "unstable", "problems"):
        assert info[k].shape == (n,) and info["_" + k].all()
    rows = info["clip_row"]
    assert (rows + 100 * env.control_substeps <= len(env.clip)).all()

    env.action_space.seed(0)
    obs2, r, term, trunc, info = env.step(env.action_space.sample())
    assert obs2.shape == (n, NOBS) and obs2.dtype == np.float32
    assert r.shape == (n,) and r.dtype == np.float64 and ((r > 0) & (r <= 1)).all()
    assert term.dtype == np.bool_ and trunc.dtype == np.bool_ and not (term | trunc).any()
    assert not np.array_equal(obs2, obs)  # the worlds moved
    assert not np.shares_memory(obs2, obs)
    assert np.array_equal(info["clip_row"], rows + env.control_substeps)

    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((n, 41), np.float32))
    with pytest.raises(ValueError, match="NaN"):
        env.step(np.full((n, 42), np.nan, np.float32))
    with pytest.raises(ValueError, match="render_mode"):
        make(paths, 1, render_mode="human")
    for name, bad in (("fall_height", float("nan")), ("reward_scale", float("nan")),
                      ("reward_scale", -1.0), ("action_margin", float("inf"))):
        with pytest.raises(ValueError, match=f"{name}=.*fix: a finite number"):
            make(paths, 1, **{name: bad})
    env.close()
    assert env.closed

    env = make(paths, 2, action_adhesion=True)
    sa = env.single_action_space
    assert sa.shape == (48,) and (sa.low[42:] == 0).all() and (sa.high[42:] == 1).all()
    env.reset(seed=0)
    a = np.zeros((2, 48), np.float32)
    a[:, :42] = env.clip[0]
    a[1, 42:] = 0.5
    env.step(a)
    ctrl = env.batch.read("ctrl")
    assert (ctrl[0, 42:] == 0).all() and (ctrl[1, 42:] == 0.5).all()
    env.close()


def test_leg_groups_and_clip_tracking(paths):
    """The contact-force groups are the legs; the clip's own targets earn a high reward."""
    env = make(paths, 4, episode_steps=100)
    g, m = env._geom_group, env.model
    for geom in range(m.ngeom):
        name = m.geom(geom).name.split("/")[-1]
        leg = name.split("_")[0]
        assert g[geom] == (fg.LEGS.index(leg) if leg in fg.LEGS else -1), name
    assert [int((g == i).sum()) for i in range(6)] == [8] * 6
    obs, info = env.reset(seed=2)
    for _ in range(30):  # 30 ms: the fly lands on its legs and tracks the clip
        obs, r, term, trunc, info = env.step(clip_actions(env, info))
    assert not term.any()
    assert (r > 0.7).all(), r
    fz = obs[:, env.obs_slices["contact_force"]].reshape(4, 6, 3)[:, :, 2]
    weight = mujoco.mj_getTotalmass(m) * -m.opt.gravity[2]
    # the legs hold the fly up (adhesion pulls them down too): upward, about its weight
    assert (fz.sum(1) > 0.5 * weight).all(), (fz, weight)
    env.close()


def test_random_rollout_64_worlds(paths):
    """64 worlds, host f32, random actions: no NaN, and the autoreset after a fall or the
    truncation (40 ms: the fly lands on the floor after about 13 ms)."""
    n, T = 64, 40
    env = make(paths, n, episode_steps=T)
    key = keyframe_obs(env)
    obs, info = env.reset(seed=7)
    env.action_space.seed(7)
    rows0 = info["clip_row"].copy()
    ended_before = np.zeros(n, bool)
    ep = np.zeros(n, int)  # each world's steps in its episode
    falls = 0
    for t in range(1, T + 3):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        assert np.isfinite(obs).all() and np.isfinite(r).all()
        assert ((r >= 0) & (r <= 1)).all()
        assert not info["unstable"].any()
        # NEXT_STEP: the step after a world ended restarts it from the keyframe
        assert np.array_equal(obs[ended_before], np.tile(key, (int(ended_before.sum()), 1)))
        assert (r[ended_before] == 0).all() and not (term | trunc)[ended_before].any()
        ep = np.where(ended_before, 0, ep + 1)
        assert np.array_equal(term, info["fell"])  # random flailing: falls, nothing unstable
        falls += int(term.sum())
        assert np.array_equal(trunc, ep == T)  # truncated after T steps of its episode
        if t == T:
            assert trunc.sum() > n // 2
        moved = ~ended_before
        assert not (obs[moved] == key).all(axis=1).any()  # the others go on
        ended_before = term | trunc
        if t == T - 1:
            fz = obs[:, env.obs_slices["contact_force"]].reshape(n, 6, 3)[:, :, 2]
            assert (fz.sum(1) > 0).sum() > 10  # landed: (flailing) legs on the floor
    assert falls > 0  # this seed's random policy topples a few flies (13): reset too
    assert not np.array_equal(info["clip_row"], rows0)  # rows drawn again at the reset
    env.close()


def test_forced_termination_resets_one_world(paths):
    """A world pushed over (fell) and one given a NaN velocity (flagged) end and restart
    from the keyframe; the other worlds go on, to the bit of an env left alone."""
    n = 8
    pushed, alone = make(paths, n), make(paths, n)
    key = keyframe_obs(pushed)
    for env in (pushed, alone):
        obs, info = env.reset(seed=11)
    a = clip_actions(pushed, info)
    pushed.step(a)
    alone.step(a)
    pushed.batch.qpos[3, 3:7] = [0, 1, 0, 0]  # upside down
    pushed.batch.qvel[5, 10] = np.nan
    o1, r1, te1, tr1, i1 = pushed.step(a)
    o2, r2, te2, tr2, i2 = alone.step(a)
    assert np.flatnonzero(te1).tolist() == [3, 5] and not te2.any() and not tr1.any()
    assert i1["fell"][3] and not i1["unstable"][3]
    assert i1["unstable"][5] and i1["problems"][5] & flysim.PROBLEM_WARNING
    others = np.setdiff1d(np.arange(n), [3, 5])
    assert np.array_equal(bits(o1[others]), bits(o2[others]))
    assert np.array_equal(bits(r1[others]), bits(r2[others]))
    o1, r1, te1, tr1, i1 = pushed.step(a)
    o2, r2, te2, tr2, i2 = alone.step(a)
    assert np.array_equal(o1[[3, 5]], np.tile(key, (2, 1)))
    assert (r1[[3, 5]] == 0).all() and not te1.any() and not i1["problems"].any()
    assert np.array_equal(bits(o1[others]), bits(o2[others]))
    assert np.array_equal(i1["clip_row"][others], i2["clip_row"][others])
    # the restarted worlds run on from their new rows
    o1, r1, te1, *_ = pushed.step(a)
    assert not te1.any() and np.isfinite(o1).all()
    assert not (o1[[3, 5]] == key).all(axis=1).any()
    pushed.close()
    alone.close()


def test_seeding_is_bitwise(paths):
    n = 8
    e1, e2, e3 = make(paths, n), make(paths, n), make(paths, n)
    o1, i1 = e1.reset(seed=123)
    o2, i2 = e2.reset(seed=123)
    _, i3 = e3.reset(seed=124)
    assert np.array_equal(bits(o1), bits(o2)) and np.array_equal(i1["clip_row"], i2["clip_row"])
    assert not np.array_equal(i1["clip_row"], i3["clip_row"])
    e1.action_space.seed(5)
    e2.action_space.seed(5)
    for _ in range(5):
        a1, a2 = e1.action_space.sample(), e2.action_space.sample()
        assert np.array_equal(a1, a2)
        s1, s2 = e1.step(a1), e2.step(a2)
        for x, y in zip(s1[:4], s2[:4]):
            assert np.array_equal(bits(x), bits(y))
    # reset(seed=) again: the same episode start; reset() goes on with the generator
    o1b, i1b = e1.reset(seed=123)
    assert np.array_equal(bits(o1b), bits(o1)) and np.array_equal(i1b["clip_row"], i1["clip_row"])
    _, i1c = e1.reset()
    assert not np.array_equal(i1c["clip_row"], i1["clip_row"])
    # a constructor seed is a first reset's seed
    e4 = make(paths, n, seed=123)
    _, i4 = e4.reset()
    assert np.array_equal(i4["clip_row"], i1["clip_row"])
    for e in (e1, e2, e3, e4):
        e.close()


def test_same_step_and_disabled_autoreset(paths):
    n, T = 4, 3
    key = None
    env = make(paths, n, episode_steps=T, autoreset_mode="SameStep")
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    key = keyframe_obs(env)
    obs, info = env.reset(seed=0)
    a = np.tile(env.clip[0].astype(np.float32), (n, 1))
    for t in range(T):
        obs, r, term, trunc, info = env.step(a)
    assert trunc.all() and (r > 0).all()
    assert np.array_equal(obs, np.tile(key, (n, 1)))  # reset in the same step
    assert info["_final_obs"].all() and info["final_info"]["_clip_row"].all()
    final = np.stack(info["final_obs"])
    assert final.shape == (n, NOBS) and not (final == key).all(axis=1).any()
    assert (info["final_info"]["clip_row"] != info["clip_row"]).any()
    obs, r, term, trunc, info = env.step(a)
    assert not (term | trunc).any() and "final_obs" not in info and (r > 0).all()
    env.close()

    env = make(paths, n, episode_steps=T, autoreset_mode=AutoresetMode.DISABLED)
    obs, info = env.reset(seed=0)
    for t in range(T):
        obs, r, term, trunc, info = env.step(a)
    assert trunc.all()
    obs, r, *_ = env.step(a)  # not reset by step
    assert not (obs == key).all(axis=1).any() and (r > 0).all()
    mask = np.array([True, False, True, False])
    obs2, info2 = env.reset(options={"reset_mask": mask})
    assert np.array_equal(obs2[mask], np.tile(key, (2, 1)))
    assert np.array_equal(obs2[~mask], obs[~mask])
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.zeros(n, bool)})
    env.close()


def test_host_round_trip_is_the_view_path(paths):
    """The cuda path (Batch.read/write, the recording then sync) run on host gives the
    view path's run to the bit, autoresets included."""
    n = 4
    ev, er = make(paths, n, episode_steps=4), make(paths, n, episode_steps=4,
                                                     host_round_trip=True)
    ov, _ = ev.reset(seed=9)
    orr, _ = er.reset(seed=9)
    assert np.array_equal(bits(ov), bits(orr))
    ev.action_space.seed(9)
    for t in range(6):
        a = ev.action_space.sample()
        sv, sr = ev.step(a), er.step(a)
        for x, y in zip(sv[:4], sr[:4]):
            assert np.array_equal(bits(x), bits(y)), t
    ev.close()
    er.close()


def _np(x):
    """A host numpy copy of an array of any library (DLPack), or x itself."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return np.asarray(x)
    if hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] != 1:  # not the CPU's
        x = x.cpu() if hasattr(x, "cpu") else x.get()  # torch, CuPy
    return np.from_dlpack(x).copy()


def _same_step(a, b, what, reward_rtol=None):
    """Two step() (or reset()) results equal to the bit, info included (the rewards within
    reward_rtol where given: exp and the mean computed by another device)."""
    for i, (x, y) in enumerate(zip(a[:-1], b[:-1])):
        if i == 1 and reward_rtol is not None and len(a) == 5:
            np.testing.assert_allclose(_np(x), _np(y), rtol=reward_rtol, atol=0, err_msg=what)
            continue
        assert np.array_equal(bits(_np(x)), bits(_np(y))), what
    for k in a[-1]:
        if k in ("final_obs", "final_info"):
            continue
        assert np.array_equal(_np(a[-1][k]), _np(b[-1][k])), (what, k)


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_array_library_is_numpy_to_the_bit(paths, mode):
    """The env over another array library (array_api_strict: the standard and nothing else,
    the code path of torch and CuPy on a GPU) on the host backend equals numpy's env to the
    bit: observations, rewards, flags, info, through falls, truncations and autoresets."""
    xs = pytest.importorskip("array_api_strict")
    n = 6
    kw = dict(episode_steps=3, autoreset_mode=mode)
    en, ex = make(paths, n, **kw), make(paths, n, arrays=xs, **kw)
    _same_step(en.reset(seed=21), ex.reset(seed=21), "reset")
    assert ex._mode == "device"
    o, _ = ex.reset(seed=21)
    en.reset(seed=21)
    assert isinstance(o, type(xs.asarray(0))) and o.dtype == xs.float32
    en.action_space.seed(21)
    for t in range(8):
        a = en.action_space.sample()
        if t == 1:  # world 2 upside down in both: it falls and restarts
            for e in (en, ex):
                e.batch.qpos[2, 3:7] = [0, 1, 0, 0]
        rn = en.step(a)
        rx = ex.step(xs.asarray(a))
        _same_step(rn, rx, (mode, t))
        if mode == "SameStep" and "final_obs" in rn[-1]:
            ended = rn[-1]["_final_obs"]
            assert np.array_equal(_np(rx[-1]["_final_obs"]), ended)
            got = _np(rx[-1]["final_obs"])[ended]
            assert np.array_equal(np.stack(rn[-1]["final_obs"][ended]), got)
    # a mask of the library's own resets those worlds, as numpy's
    mask = np.array([True, False, False, True, False, False])
    _same_step(en.reset(options={"reset_mask": mask}),
               ex.reset(options={"reset_mask": xs.asarray(mask)}), "masked reset")
    with pytest.raises(ValueError, match="actions of shape"):
        ex.step(xs.zeros((n + 1, 42)))
    with pytest.raises(ValueError, match="host_round_trip"):
        make(paths, 1, arrays=xs, host_round_trip=True)
    with pytest.raises(ValueError, match="on cuda.*fix: arrays=torch or cupy"):
        make(paths, 1, arrays=xs, backend="cuda")
    en.close()
    ex.close()


def _gpu_library():
    """torch or CuPy with a GPU, or None."""
    for name in ("torch", "cupy"):
        try:
            lib = __import__(name)
            if (lib.cuda.is_available() if name == "torch" else lib.cuda.runtime.getDeviceCount()):
                return lib
        except Exception:
            pass
    return None


@pytest.mark.skipif(not flysim.backend_available("cuda")[0], reason="no cuda backend here")
def test_cuda_device_arrays_are_the_round_trip(paths):
    """On a GPU with torch or CuPy: the env on device arrays (the batch on the library's
    stream, device recording, device-mask resets, rewards on the device) equals the numpy
    env's host round trips to the bit, autoresets included; the rewards (exp and a mean on
    the GPU) to 1e-12."""
    lib = _gpu_library()
    if lib is None:
        pytest.skip("no torch or CuPy with a GPU")
    n = 16
    kw = dict(backend="cuda", threads=None, episode_steps=3)
    en, ed = make(paths, n, **kw), make(paths, n, arrays=lib, **kw)
    _same_step(en.reset(seed=5), ed.reset(seed=5), "reset")
    en.action_space.seed(5)
    for t in range(7):
        a = en.action_space.sample()
        _same_step(en.step(a), ed.step(lib.asarray(a).cuda() if lib.__name__ == "torch"
                                       else lib.asarray(a)), t, reward_rtol=1e-12)
    en.close()
    ed.close()


@pytest.mark.skipif(not flysim.backend_available("cuda")[0], reason="no cuda backend here")
def test_cuda_rollout(paths):
    env = make(paths, 64, backend="cuda", threads=None, episode_steps=5)
    obs, info = env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(8):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        assert np.isfinite(obs).all() and np.isfinite(r).all()
    env.close()


def test_backends_threads_and_default_assets(paths, monkeypatch):
    """cpu (f64) and host f64 run the same env; the threads do not change a run (host f32,
    1 or 2 threads, to the bit); FLYSIM_ASSETS is the default folder of the assets."""
    runs = {}
    for name, kw in (("host1", dict(threads=1)), ("host2", dict(threads=2)),
                     ("host_f64", dict(precision="f64")), ("cpu", dict(backend="cpu"))):
        env = make(paths, 4, **kw)
        env.reset(seed=4)
        env.action_space.seed(4)
        for _ in range(20):
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            assert np.isfinite(obs).all() and np.isfinite(r).all()
        runs[name] = obs, r
        env.close()
    assert np.array_equal(bits(runs["host1"][0]), bits(runs["host2"][0]))
    for name in ("host_f64", "cpu"):  # same physics, other arithmetic: close, not equal
        np.testing.assert_allclose(runs[name][0][:, :42], runs["host1"][0][:, :42], atol=0.05)

    monkeypatch.setenv("FLYSIM_ASSETS", os.path.dirname(paths["model"]))
    env = fg.FlyWalkVectorEnv(1, threads=1)
    assert env.reset(seed=0)[0].shape == (1, NOBS)
    env.close()
    monkeypatch.delenv("FLYSIM_ASSETS")
    with pytest.raises(ValueError, match="FLYSIM_ASSETS"):
        fg.FlyWalkVectorEnv(1)
