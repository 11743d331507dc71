"""pytest's set-up of python/tests: MuJoCo's renderer headless (EGL) unless MUJOCO_GL says
otherwise, set before any test module imports mujoco."""
import os

os.environ.setdefault("MUJOCO_GL", "egl")
