"""The compiled path: which one runs (numba kernels or the NumPy core), where numba's cache
lives, and the model flattened for :mod:`.kernels`.

:func:`jit_path` decides once per process:

- ``KIN_DYN_JIT=0`` (or ``false``, ``no``, ``off``) runs the NumPy core;
- numba missing, or refusing to import (e.g. a NumPy newer than it supports), runs the
  NumPy core, and the reason is kept (:func:`jit_status`) for the one log line the node
  writes and for /diagnostics.

Compiled kernels are cached on disk (numba's ``cache=True``; keyed by the CPU and numba's
version, so a new machine or numba compiles once again). The directory: ``NUMBA_CACHE_DIR``
when set (it wins); else ``$ROS_HOME/kin_dyn_ros/numba`` when ``ROS_HOME`` is set, else
``$XDG_CACHE_HOME/kin_dyn_ros/numba`` (default ``~/.cache``). When none of them is writable
(a read-only install and home), the kernels compile in memory at every start.

:class:`CompiledModel` packs a :class:`.model.Model` into the two flat arrays the kernels
take and calls them; ``KinDynComputations`` calls it when the compiled path runs, and its
NumPy methods otherwise: the rest of the core and the node call the same methods either way.
"""

import atexit
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from .algorithms import SINGULAR_BASE
from .checks import checked_arrays

__all__ = ["jit_path", "jit_status", "CompiledModel", "JitStatus", "SingularMassMatrix",
           "warm_up", "ensure_compiled", "prepare", "queries_ready", "steady_ready",
           "contacts_ready", "contact_kernels",
           "BalanceContacts",
           "inputs", "compiled_kernels", "EMPTY",
           "NO_TARGETS", "NO_FRAMES", "NO_WRENCHES", "NO_BALANCING", "NO_BALANCE_PACK",
           "no_balancing", "direct", "direct_arrays", "direct_call"]

_FALSE = ("0", "false", "no", "off")
COMPILE_BESIDE_S = 300.0    # at most this long for the other process's compilation
# where this package was imported from: the compiling process runs the same code
_PACKAGE_PARENT = str(pathlib.Path(__file__).resolve().parents[2])
_LOCK = threading.RLock()
_STATE = {}


class JitStatus:
    """What runs: ``compiled`` (bool), ``reason`` (why the NumPy core runs, else ""),
    ``cache_dir`` (None: compiled in memory), ``compile_seconds`` of the first warm-up and
    ``queries_seconds``, when its queries' kernels loaded in the background (see
    :func:`queries_ready`), how long after it they were ready."""

    def __init__(self, compiled, reason="", cache_dir=None):
        self.compiled, self.reason, self.cache_dir = compiled, reason, cache_dir
        self.compile_seconds = None
        self.queries_seconds = None

    def describe(self):
        """One line for the log and /diagnostics."""
        if not self.compiled:
            return f"NumPy core ({self.reason})"
        where = self.cache_dir or "in memory: no writable cache directory"
        return f"compiled kernels (numba; cache: {where})"


def _writable_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path):
            pass
        return True
    except OSError:
        return False


def _cache_dir():
    """The directory for numba's cache, or None when none is writable."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return given if _writable_dir(given) else None
    candidates = []
    if os.environ.get("ROS_HOME"):
        candidates.append(os.path.join(os.environ["ROS_HOME"], "kin_dyn_ros", "numba"))
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    candidates.append(os.path.join(cache_home, "kin_dyn_ros", "numba"))
    return next((c for c in candidates if _writable_dir(c)), None)


def _select():
    if os.environ.get("KIN_DYN_JIT", "1").strip().lower() in _FALSE:
        return None, JitStatus(False, "KIN_DYN_JIT=0")
    cache = _cache_dir()
    if cache is None:
        os.environ["KIN_DYN_JIT_CACHE"] = "0"
    elif not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = cache
    try:
        import numba
        if cache is not None:
            numba.config.CACHE_DIR = cache       # when numba was imported before us
        from . import kernels
    except Exception as exc:                     # missing, or refusing this NumPy
        return None, JitStatus(False, f"numba unavailable: {type(exc).__name__}: {exc}"
                               .splitlines()[0])
    return kernels, JitStatus(True, cache_dir=cache)


def jit_path():
    """The :mod:`.kernels` module, or None when the NumPy core runs (decided once)."""
    with _LOCK:
        if "path" not in _STATE:
            _STATE["path"] = _select()
    return _STATE["path"][0]


def jit_status():
    """The :class:`JitStatus` of this process."""
    jit_path()
    return _STATE["path"][1]


def _f64(x):
    """x as a writable C-contiguous float64 array (one compiled signature for every call)."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    return a if a.flags.writeable else a.copy()


_F64 = np.dtype(np.float64)
_EMPTY = EMPTY = np.empty(0)
_EYE4 = np.eye(4)
_S44 = (4, 4)
_S6 = (6,)
NO_TARGETS = np.empty((0, 2), dtype=np.int64)
NO_FRAMES = np.empty(0, dtype=np.int64)
NO_WRENCHES = np.empty((0, 6))
# :func:`.kernels.steady_tick`'s ``balancing``: its balance messages' part (pattern, buffer,
# sources, places, stamp pairs) while it has none (its empty pattern matches no tick), and
# the whole without balance outputs (not read: of its types, the one compiled signature)
NO_BALANCE_PACK = (NO_FRAMES, np.zeros(8, np.uint8), NO_FRAMES, NO_FRAMES, NO_TARGETS)
NO_BALANCING = (NO_FRAMES, NO_FRAMES, NO_FRAMES, np.zeros((0, 3)), np.zeros((0, 3)),
                np.zeros(0, np.bool_), np.zeros((0, 3)), np.zeros(1, np.int64), 0.0, 0.0, 0.0,
                *NO_BALANCE_PACK, np.zeros(2, np.int64))


def no_balancing(kernels):
    """:func:`.kernels.steady_balancing` of :data:`NO_BALANCING` (``kernels``: the compiled
    module), made once per process."""
    made = _STATE.get("no balancing")
    if made is None:
        made = _STATE["no balancing"] = kernels.steady_balancing(NO_BALANCING)
    return made


class BalanceContacts:
    """The contacts of :func:`.kernels.balance` as arrays (fixed per set of contacts): their
    link frame indices ``links`` (k,), sole centres and normals (k, 3) in link axes, whether
    each is a flat sole (``soles``), their points (P, 3) (contact i's from
    ``first_point[i]``), the tolerances of :mod:`.balance` (and the support hull's) and the
    output's ``layout`` (:func:`.kernels.contact_points`': ``points_layout``);
    ``names`` the contacts' names (the caller's), ``all_measured`` (k,) all true."""

    def __init__(self, kernels, contacts, frame_index, names=()):
        from .balance import COPLANAR_TOL, MIN_UP_COSINE
        from .contacts import HULL_TOL
        self.contacts = tuple(contacts)             # (kept: the cache's key is their ids)
        self.names = tuple(names)
        self.all_measured = np.ones(len(self.contacts), dtype=np.bool_)
        self.links = np.array([frame_index(c.link) for c in contacts], dtype=np.int64)
        self.centres = np.array([c.centre_list for c in contacts], dtype=float).reshape(-1, 3)
        self.normals = np.array([c.normal_list for c in contacts], dtype=float).reshape(-1, 3)
        self.soles = np.array([not (c.spread > COPLANAR_TOL or c.breadth <= COPLANAR_TOL)
                               for c in contacts], dtype=np.bool_)
        points = [np.asarray(c.points_list, dtype=float).reshape(-1, 3) for c in contacts]
        self.points = np.ascontiguousarray(np.concatenate(points) if points
                                           else np.zeros((0, 3)))
        self.first_point = np.cumsum([0] + [len(p) for p in points]).astype(np.int64)
        self.tol, self.min_cosine, self.hull_tol = COPLANAR_TOL, MIN_UP_COSINE, HULL_TOL
        self.layout = kernels.balance_layout(len(self.contacts))
        self.points_layout = kernels.contact_points_layout(len(self.contacts),
                                                           len(self.points))


class SingularMassMatrix(ValueError):
    """The mass matrix (or its floating-base block) is singular."""


class NonFiniteWrench(ValueError):
    """An external wrench given to a call holds NaN or inf (the kernel found it; the caller
    names the frame)."""


_SLOTS = tuple(range(7))              # CompiledModel._call's state arguments
_TICK_SLOTS = (0, 1, 2, 3, 6)         # the tick's: no accelerations


class CompiledModel:
    """A model and a gravity packed for :mod:`.kernels` (``mf``, ``mi``), and the calls of
    ``KinDynComputations`` on them (frames as indices, representations as ints)."""

    def __init__(self, kernels, model, gravity):
        self.k = kernels
        # (the position calls' kernels: an attribute lookup less in calls of ~1-5 us)
        self._frame_at, self._whole_at = kernels.frame_at_position, kernels.whole_at_position
        self._bias_at = kernels.bias_at_state
        self._frame_index = model.frame_index       # (frame_at's: link name -> index)
        n, n_frames = model.n, len(model.frame_names)
        self.n, self.n_frames = n, n_frames
        self.mf, self.mi = _packed_floats(kernels, model, gravity), _packed_ints(kernels, model)
        self._state = ("w_H_b", (4, 4)), ("s", (n,)), ("base_vel", (6,)), ("s_dot", (n,)), \
            ("base_acc", (6,)), ("s_ddot", (n,)), ("tau", (n,))
        self._shapes = tuple(shape for _, shape in self._state)
        size = 6 + n
        k = kernels
        # what -> (the kernel's request, out's length, the answer's shape; None: out)
        self._whole = {"com": (0, 3, None), "mass": (k.WANT_MASS, 3 + size * size, (size, size)),
                       "rnea": (k.WANT_RNEA, 3 + size, (size,)),
                       "gravity": (k.WANT_GRAVITY, 3 + size, (size,)),
                       "cmm": (k.WANT_CMM, 3 + 6 * size, (6, size)),
                       "com_jacobian": (k.WANT_COMJ, 3 + 3 * size, (3, size)),
                       "aba": (k.WANT_ABA, 3 + size, (size,)),
                       "minv": (k.WANT_MINV, 3 + size * size, (size, size))}
        self._frame = {"pose": (k.WANT_POSE, 16, (4, 4)),
                       "jacobian": (k.WANT_JACOBIAN, 6 * size, (6, size)),
                       "jacobian_dot": (k.WANT_JDOT, 6 * size, (6, size)),
                       "relative": (k.WANT_RELATIVE, 6 * n, (6, n))}

    def _call(self, kernel, head, state, tail, slots=_SLOTS):
        """(status, arrays) of ``kernel(*head, *arrays, *tail)`` for the ``state`` arguments
        that are ``slots`` of (w_H_b, s, base_vel, s_dot, base_acc, s_ddot, tau) (None: left
        out, given as an empty array); ValueError naming a wrong shape or a NaN/inf
        (NOT_FINITE).

        Arrays of the compiled types (float64, C-contiguous, writable) go straight in;
        anything else is refused by the dispatcher (compilation is off after the warm-up,
        :func:`warm_up`) and retried as such copies: no check costs a well-formed call more
        than a shape comparison."""
        args, shapes = list(state), self._shapes
        try:
            for i, value in enumerate(state):
                if value is None:
                    args[i] = _EMPTY
                elif value.shape != shapes[slots[i]]:
                    raise TypeError
            status = kernel(*head, *args, *tail)
        except (AttributeError, TypeError):
            items = self._items(state, slots)
            given = iter(inputs(*items))           # raises naming a wrong shape
            args = [_EMPTY if value is None else next(given) for value in state]
            status = kernel(*head, *args, *tail)
        if status == self.k.NOT_FINITE:
            checked_arrays(*self._items(state, slots))   # raises naming the value, if one
        return status, args

    def _at_position(self, w_H_b, s):
        """Whether (w_H_b, s) are arrays of the right shapes: a call at a position goes
        straight to its kernel (~1 us less than :meth:`_call`; the dispatcher refuses other
        types, and the caller then goes through :meth:`_call`)."""
        return type(w_H_b) is type(s) is np.ndarray and w_H_b.shape == _S44 \
            and s.shape == self._shapes[1]

    def _items(self, state, slots):
        """(name, value, shape) of the given (not None) state arguments."""
        return [(self._state[slot][0], value, self._state[slot][1])
                for slot, value in zip(slots, state) if value is not None]

    # -- per tick ------------------------------------------------------------------------
    def tick(self, rep, w_H_b, s, nu, s_dot, tau, targets, wrenches):
        """(status, w_H_b (4, 4), out, poses) of :func:`.kernels.tick`: ``out`` (22 n + 19,)
        as :func:`.kernels.tick` lays it out, ``poses`` C_H_body (N, 4, 4). ``wrenches``
        (6 k,) F/T readings, ``targets`` (k, 2) their [link, expressed frame] indices.
        ValueError naming a wrong or non-finite state; NOT_FINITE for a wrench."""
        n = self.n
        out = np.empty(22 * n + 19)
        poses = np.empty((n + 1, 4, 4))
        if tau is not None and self._at_position(w_H_b, s) and type(nu) is type(s_dot) \
                is type(tau) is np.ndarray and nu.shape == _S6 and s_dot.shape == tau.shape \
                == s.shape:
            try:        # (the node's tick: every argument of the compiled types, ~2 us less)
                status = self.k.tick(self.mf, self.mi, int(rep), w_H_b, s, nu, s_dot, tau,
                                     targets, wrenches, out, poses)
                if status != self.k.NOT_FINITE:
                    return status, w_H_b, out, poses
            except TypeError:           # not float64, C-contiguous and writable: _call's
                pass
        status, state = self._call(self.k.tick, (self.mf, self.mi, int(rep)),
                                   (w_H_b, s, nu, s_dot, tau), (targets, wrenches, out, poses),
                                   _TICK_SLOTS)
        return status, state[0], out, poses

    def balance(self, poses, base_position, contacts, expressed, wrenches, measured,
                threshold, com, com_velocity):
        """(status, out) of :func:`.kernels.balance` (OK, or NOT_SOLES: the caller computes
        it) on the tick's ``poses`` C_H_body (N, 4, 4) and ``base_position`` (3,), for the
        :class:`BalanceContacts` ``contacts``, with per contact the frame index its wrench is
        expressed in ``expressed`` (k,), the wrench (k, 6) and whether there is one
        (``measured`` (k,))."""
        c = contacts
        out = np.empty(c.layout[-1])
        status = self.k.balance(self.mf, self.mi, poses, np.ascontiguousarray(base_position),
                                c.links, expressed, wrenches, measured, c.centres, c.normals,
                                c.soles, c.points, c.first_point, float(threshold), c.tol,
                                c.min_cosine, com, com_velocity, out)
        return status, out

    def contact_points(self, poses, base_position, contacts, expressed, wrenches, measured,
                       threshold, com, com_velocity, axes, up):
        """(status, out, balanced) of :func:`.kernels.contact_points` with :meth:`balance`'s
        arguments and the ground ``axes`` (2, 3) and ``up`` (3,) of the support."""
        c = contacts
        out, balanced = np.empty(c.points_layout[-1]), np.empty(c.layout[-1])
        status = self.k.contact_points(
            self.mf, self.mi, poses, np.ascontiguousarray(base_position), c.links, expressed,
            wrenches, measured, c.centres, c.normals, c.soles, c.points, c.first_point,
            float(threshold), c.tol, c.min_cosine, com, com_velocity, axes, up, c.hull_tol,
            balanced, out)
        return status, out, balanced

    def world_frame_pose(self, poses, w_H_b, index):
        """World pose (4, 4) of frame ``index`` from C_H_body (N, 4, 4) and the base pose
        w_H_b (4, 4) (:func:`.kernels.world_frame_pose`)."""
        out = np.empty((4, 4))
        w_H_b, = inputs(("w_H_b", w_H_b, (4, 4)))
        self.k.world_frame_pose(self.mf, self.mi, poses, w_H_b, int(index), out)
        return out

    def frame_poses(self, poses, base_position):
        """World poses (F, 4, 4) of every frame from C_H_body (N, 4, 4). (Waits as
        :meth:`whole`.)"""
        if not _QUERIES_READY.is_set():
            _await_queries()
        out = np.empty((self.n_frames, 4, 4))
        self.k.frame_poses(self.mf, self.mi, poses, np.ascontiguousarray(base_position), out)
        return out

    # -- queries -------------------------------------------------------------------------
    def whole(self, rep, what, w_H_b, s, nu=None, s_dot=None, nu_dot=None, s_ddot=None,
              tau=None, gravity=True, frames=NO_FRAMES, wrenches=NO_WRENCHES):
        """One whole-body quantity (``what``: com, mass, rnea, gravity, cmm, com_jacobian,
        aba, minv) of :func:`.kernels.whole_body`, in the representation ``rep``, user joint
        order; ``wrenches`` (k, 6) finite, on frame indices ``frames`` (k,). ValueError
        naming a wrong or non-finite input; SingularMassMatrix. (Waits for the queries'
        kernels in the first seconds after a start that compiled them:
        :func:`queries_ready`.)"""
        if not _QUERIES_READY.is_set():
            _await_queries()
        want, length, shape = self._whole[what]
        out = np.empty(length)
        status = None
        if tau is None and self._at_position(w_H_b, s):
            try:    # a position, or one with every rate (rnea, bias): straight in
                if nu is s_dot is nu_dot is s_ddot is None:
                    status = self.k.whole_body(self.mf, self.mi, int(rep), want, w_H_b, s,
                                               _EMPTY, _EMPTY, _EMPTY, _EMPTY, _EMPTY, gravity,
                                               frames, wrenches, out)
                elif type(nu) is type(s_dot) is type(nu_dot) is type(s_ddot) is np.ndarray \
                        and nu.shape == nu_dot.shape == _S6 \
                        and s_dot.shape == s_ddot.shape == s.shape:
                    status = self.k.whole_body(self.mf, self.mi, int(rep), want, w_H_b, s, nu,
                                               s_dot, nu_dot, s_ddot, _EMPTY, gravity, frames,
                                               wrenches, out)
            except TypeError:           # not float64, C-contiguous and writable
                pass
        if status is None or status == self.k.BAD_SHAPE:     # (_call names the input)
            status, _ = self._call(self.k.whole_body, (self.mf, self.mi, int(rep), want),
                                   (w_H_b, s, nu, s_dot, nu_dot, s_ddot, tau),
                                   (gravity, frames, wrenches, out))
        if status == self.k.NOT_FINITE:      # names the value, else it was a wrench
            checked_arrays(*self._items((w_H_b, s, nu, s_dot, nu_dot, s_ddot, tau), _SLOTS))
            raise NonFiniteWrench("an external wrench contains NaN or inf")
        if status == self.k.SINGULAR:
            raise SingularMassMatrix(SINGULAR_BASE)
        if shape is None:
            return out
        return out[3:] if len(shape) == 1 else out[3:].reshape(shape)   # (a vector: ~0.15 us)

    def whole_at(self, rep, what, w_H_b, s):
        """:meth:`whole` of a quantity at a position (com, mass, gravity, cmm,
        com_jacobian, minv) straight from the kernel (``rep`` an int), or None when that
        cannot answer (as :meth:`frame_at`; also a singular M for minv): the caller then
        takes :meth:`whole`, which says why."""
        want, _, shape = self._whole[what]
        out = np.empty(shape or 3)
        if _QUERIES_READY.is_set():
            try:
                if not self._whole_at(self.mf, self.mi, rep, want, w_H_b, s, out):
                    return out
            except (TypeError, ValueError, AttributeError):
                pass    # (ValueError: the dispatcher on an empty list; AttributeError: a
                #          list given to the Python kernels of NUMBA_DISABLE_JIT=1)
        return None

    def bias_at(self, rep, gravity, w_H_b, s, nu, s_dot):
        """The bias force h (6 + n,) (without gravity: C nu) at (w_H_b, s, nu, s_dot) straight
        from :func:`.kernels.bias_at_state` (``rep`` an int), or None when that cannot
        answer (as :meth:`whole_at`): the caller then takes :meth:`whole`."""
        out = np.empty(6 + self.n)
        if _QUERIES_READY.is_set():
            try:
                if not self._bias_at(self.mf, self.mi, rep, gravity, w_H_b, s, nu, s_dot, out):
                    return out
            except (TypeError, ValueError, AttributeError):
                pass    # (as whole_at)
        return None

    def frame(self, rep, what, frame, w_H_b, s, nu=None, s_dot=None):
        """One quantity of frame index ``frame`` (``what``: pose, jacobian, jacobian_dot,
        relative) of :func:`.kernels.frame_query`; ``w_H_b`` None for ``relative``. (Waits
        as :meth:`whole`.) ValueError naming a wrong or non-finite input."""
        if not _QUERIES_READY.is_set():
            _await_queries()
        want, length, shape = self._frame[what]
        out = np.empty(length)
        status, _ = self._call(self.k.frame_query, (self.mf, self.mi, int(rep), want, frame),
                               (_EYE4 if w_H_b is None else w_H_b, s, nu, s_dot), (out,))
        if status != self.k.OK:
            checked_arrays(*self._items((w_H_b, s, nu, s_dot), _SLOTS))
            raise ValueError("an input contains NaN or inf")
        return out.reshape(shape)

    def frame_at(self, rep, what, frame, w_H_b, s):
        """:meth:`frame` at a position (pose, jacobian, relative) of the link named ``frame``
        straight from :func:`.kernels.frame_at_position` (``rep`` an int, ``w_H_b`` given),
        or None when that cannot answer: an unknown frame, the queries' kernels not loaded
        yet, arguments not arrays of the compiled types (the dispatcher refuses them) or of
        the wrong shapes (the kernel does), a NaN or inf. The caller then takes
        :meth:`frame`, which names what was wrong. These calls take ~1-2 us: no check here
        that the kernel makes anyway."""
        want, _, shape = self._frame[what]
        out = np.empty(shape)
        if _QUERIES_READY.is_set():
            try:
                if not self._frame_at(self.mf, self.mi, rep, want, self._frame_index[frame],
                                      w_H_b, s, out):
                    return out
            except (TypeError, ValueError, AttributeError, KeyError):
                pass    # (ValueError: the dispatcher on an empty list; AttributeError: a
                #          list given to the Python kernels of NUMBA_DISABLE_JIT=1)
        return None

    def coriolis(self, rep, w_H_b, s, nu, s_dot):
        """C (6 + n, 6 + n) of :func:`.kernels.coriolis` (compiled at its first call, as
        :meth:`horizon`: the arguments are always float64 C-contiguous writable copies, one
        signature); ValueError naming a wrong or non-finite input."""
        n = self.n
        items = (("w_H_b", w_H_b, (4, 4)), ("s", s, (n,)), ("base_vel", nu, (6,)),
                 ("s_dot", s_dot, (n,)))
        state = inputs(*items)
        out = np.empty((6 + n, 6 + n))
        if self.k.coriolis(self.mf, self.mi, int(rep), *state, out) == self.k.NOT_FINITE:
            checked_arrays(*items)              # raises, naming the value
        return out

    def horizon(self, rep, want, frames, w_H_b, s, nu, s_dot):
        """(K, row length) of :func:`.kernels.horizon`: the quantities of the mask ``want``
        at K states (``w_H_b`` (K, 4, 4), ``s``, ``s_dot`` (K, n), ``nu`` (K, 6), float64,
        C-contiguous, shapes checked by the caller), frame indices ``frames`` (F,), the row's
        offsets (:func:`.kernels.horizon_layout`) and the first state with a NaN or inf
        (-1: none; the rows from it on are not written)."""
        frames = np.array(frames, dtype=np.int64)
        lay = self.k.horizon_layout(6 + self.n, len(frames), want)
        out = np.empty((len(w_H_b), lay[-1]))
        bad = self.k.horizon(self.mf, self.mi, int(rep), want, frames, w_H_b, s, nu, s_dot, out)
        return out, lay, bad


def _packed_floats(kernels, model, gravity):
    """``mf`` of :func:`.kernels.float_layout`."""
    n = model.n
    lay = kernels.float_layout(n, len(model.frame_names))
    body = np.empty((n + 1, 13))
    body[:, 0] = model.mass
    body[:, 1:4] = model.inertia[:, [5, 3, 4], [1, 2, 0]]     # h from h^ = I[3:, :3]
    body[:, 4:] = model.inertia[:, 3:, 3:].reshape(-1, 9)
    parts = (model.basis, model.screw, body, model.body_H_frame, model.link_H_joint,
             model.tf_quaternions, gravity)
    mf = np.zeros(lay[-1])
    for start, end, part in zip(lay[:-1], lay[1:], parts):
        mf[start:end] = np.ravel(part)
    return mf


def _packed_ints(kernels, model):
    """``mi`` of :func:`.kernels.int_layout`."""
    n, n_frames = model.n, len(model.frame_names)
    lay = kernels.int_layout(n, n_frames)
    mi = np.zeros(lay[-1], dtype=np.int64)
    mi[0], mi[1] = n, n_frames
    parts = (model.parent, model.coordinate, model.internal, model.frame_body)
    for start, end, part in zip(lay[:-1], lay[1:], parts):
        mi[start:end] = part
    return mi


# The kernels in the order a process needs them: the tick's (``_TICK`` and ``_GLUE``) before
# the node's first output; soon after, those of the balance and the contact mechanics
# (``_CONTACT``: NumPy's until then, :func:`contacts_ready`), the steady tick's (``_STEADY``:
# the node ticks the plain way until it is in, :func:`steady_ready`) and the queries'
# (``_QUERIES``: the node's odometry in a frame other than the base and the in-process
# services; every frame's world pose, which the node does not publish; :func:`queries_ready`);
# ``_LATER`` (horizon, coriolis: lazy, at their first call) only in the processes that ask
# for them. With an empty cache the node's process compiles ``_TICK`` (~8 s here) while one
# process beside it compiles ``_TICK_PARTS`` (~5 s), ``_GLUE`` (~4 s), ``_CONTACT`` (~13 s),
# ``_STEADY`` (~5 s once the tick is in the cache) and ``_QUERIES`` and ``_LATER`` (~40 s)
# into the cache, one group after the other; the node loads each group from the cache when
# it is done (:func:`_load_beside`; from a warm cache the queries' load in the background
# too, ~0.1 s).
# Two compiling processes on two cores: the tick's never shares its core.
_TICK = ("tick",)
# the kernels the tick calls that numba types last in its compile (~5 s of ~12 here), in the
# reverse order: with an empty cache the process beside compiles them first, while the
# node's compiles the tick from its start; the tick's typing then loads each from the cache
# once it is there. Each with the argument types the tick calls it with (:func:`_tick_parts`
# spells them: int64; f1-f3 and i1-i2, C-contiguous float64 and int64 arrays of 1-3
# dimensions; numba's literal True; an argument left at its default False)
_TICK_PARTS = (("_base_drift_times", "int f2 f1 f1"),
               ("_base_transform", "int f2 f2 True"),
               ("_forward_dynamics", "i1 f2 f1 f1 f1 int f2 f1"),
               ("_mass_matrix", "i1 f2 f2 f2 f2"),
               ("_rnea", "i1 f2 f2 f1 f1 f1 f1 f2 f1"),
               ("_sensor_wrenches", "f1 i1 f3 i2 f1 f2"),
               ("_base_transform", "int f2 f2 default"))
_GLUE = ("scatter_words", "merge_joint_state", "read_stamped", "share_state")
_CONTACT = ("balance", "support_hull", "polygon_margin", "world_frame_pose", "contact_points")
_STEADY = ("steady_arguments", "steady_balancing", "steady_results_layout",
           "steady_tick")
_QUERIES = ("whole_body", "frame_query", "frame_poses", "frame_at_position", "whole_at_position",
            "bias_at_state")
_LATER = ("horizon", "coriolis")
# what a set-up (:func:`prepare`) compiles in a second process beside the first one's
# groups: the last of them in the first one's order, those no other kernel calls but horizon
_SECOND = ("coriolis", "frame_query", "frame_poses", "frame_at_position")
# each cleared while its group loads in the background (and set once loaded, or failed)
_CONTACT_READY, _STEADY_READY, _QUERIES_READY = \
    threading.Event(), threading.Event(), threading.Event()
_BACKGROUND = ((_CONTACT, _CONTACT_READY), (_STEADY, _STEADY_READY),
               (_QUERIES, _QUERIES_READY))
for _ready in (_CONTACT_READY, _STEADY_READY, _QUERIES_READY):
    _ready.set()


def _tick_parts():
    """[(name, argument types)] of :data:`_TICK_PARTS`, in its order, as numba's types
    (test_compiled compares them with the tick's calls)."""
    from numba import types
    spelled = {"int": types.int64, "True": types.literal(True),
               "default": types.Omitted(False),
               **{f"f{dim}": types.Array(types.float64, dim, "C") for dim in (1, 2, 3)},
               **{f"i{dim}": types.Array(types.int64, dim, "C") for dim in (1, 2)}}
    return [(name, tuple(spelled[word] for word in args.split()))
            for name, args in _TICK_PARTS]


def _warm(compiled, names):
    """Call the kernels ``names`` once each with the argument types of every later call
    (compile those of :data:`_TICK_PARTS` with the tick's argument types; not under
    NUMBA_DISABLE_JIT, where the kernels are Python functions)."""
    for name, types in _tick_parts():
        if name in names and hasattr(getattr(compiled.k, name), "compile"):
            getattr(compiled.k, name).compile(types)
    h, z, z6 = np.eye(4), np.zeros(compiled.n), np.zeros(6)
    if "tick" in names:
        compiled.tick(2, h, z, z6, z, z, NO_TARGETS, _EMPTY)
    if "steady_tick" in names:      # (as the node's steady tick calls it: the JointState
        n, none = compiled.n, np.zeros(0, np.int64)   # as bytes, here none to merge)
        buf, pairs, raw = np.zeros(8, np.uint8), np.zeros((1, 2), np.intp), np.zeros(8, np.uint8)
        flags, words = np.zeros(n, np.bool_), np.zeros(7 + 22 + 2 * n)
        size, k = 22 * n + 19, compiled.k
        fixed = k.steady_arguments(
            none, raw, raw, raw.view(np.float64), flags, flags, np.zeros(2, np.int64),
            compiled.mf, compiled.mi, 2, np.zeros((3, n)), NO_TARGETS, np.zeros(2, np.int64),
            True, False, 0.1, True, words, 7, 1, 0, buf, NO_FRAMES, NO_FRAMES, pairs,
            np.zeros((2, 0), np.int64), np.zeros((2, 0)), size, n + 1)
        end = k.steady_results_layout(size, n + 1, 1, n)[-1]
        k.steady_tick(b"", 0, 0, 0, fixed, h, z6, _EMPTY, np.empty(end), no_balancing(k))
    if "frame_poses" in names:
        compiled.frame_poses(np.zeros((compiled.n + 1, 4, 4)), np.zeros(3))
    if "scatter_words" in names:
        words, pairs = np.zeros(2), np.zeros((1, 2), np.intp)
        compiled.k.scatter_words(z6, z6, h, True, NO_FRAMES, NO_FRAMES, words, pairs,
                                 words.view(np.uint32), 0, 0)
    if "merge_joint_state" in names:
        none, values = np.zeros(0, np.int64), np.zeros((3, 1))
        flags = np.zeros(1, np.bool_)
        raw = np.zeros(8, np.uint8)
        layout = compiled.k.merge_layout(0, 0, none, none, none, none, none, none)
        compiled.k.merge_joint_state(np.frombuffer(b"", np.uint8), layout, raw,  # read-only
                                     raw, raw.view(np.float64), values, flags, flags,
                                     np.zeros(2, np.int64))
    if "read_stamped" in names:
        ints, raw = np.zeros(1, np.intp), np.zeros(48, np.uint8)
        for pose in (np.zeros((4, 4)), np.zeros((0, 0))):
            compiled.k.read_stamped(b"", 0, ints, raw, ints, ints, 0,   # (the bytes taken)
                                    raw, raw.view(np.float64), z6, np.zeros(2, np.int64),
                                    pose, z6 if len(pose) else z6[:0], 0.01)
    if "share_state" in names:
        words = np.zeros(6 + 22 + 2 * compiled.n)
        compiled.k.share_state(words, words.view(np.uint64), 6, 1.0, 0.0, h, z, z6, z)
    if "balance" in names:
        from .contacts import Contact
        sole = BalanceContacts(compiled.k, [Contact("b", np.eye(3), np.eye(3)[2],
                                                    1.0)], lambda _: 0)
        poses = np.zeros((compiled.n + 1, 4, 4))
        compiled.balance(poses, np.zeros(3), sole, np.zeros(1, np.int64), np.zeros((1, 6)),
                         np.ones(1, np.bool_), 0.0, np.zeros(3), np.zeros(3))
    if "contact_points" in names:
        from .contacts import Contact
        sole = BalanceContacts(compiled.k, [Contact("b", np.eye(3), np.eye(3)[2],
                                                    1.0)], lambda _: 0)
        compiled.contact_points(np.zeros((compiled.n + 1, 4, 4)), np.zeros(3), sole,
                                np.zeros(1, np.int64), np.zeros((1, 6)), np.ones(1, np.bool_),
                                0.0, np.zeros(3), np.zeros(3), h[:2, :3].copy(), z6[:3])
    if "support_hull" in names:
        square = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        compiled.k.support_hull(square, np.array([0, 3]), h[None], z6[:3], h[:2, :3].copy(),
                                h[2, :3], 1e-12, np.empty(compiled.k.support_layout(3)[-1]))
    if "world_frame_pose" in names:
        compiled.world_frame_pose(np.zeros((compiled.n + 1, 4, 4)), h, 0)
    if "polygon_margin" in names:
        compiled.k.polygon_margin(h[:3, :2].copy(), h[:3, :2].copy(), z6[:3], h[:2, :3].copy(),
                                  z6[:3])
    if "whole_body" in names:
        compiled.whole(2, "mass", h, z)
    if "frame_query" in names:
        compiled.frame(2, "pose", 0, h, z)
    if "frame_at_position" in names:
        compiled.k.frame_at_position(compiled.mf, compiled.mi, 2, 0, 0, h, z, np.empty((0, 0)))
    if "whole_at_position" in names:            # (a vector's out, and a matrix's)
        compiled.k.whole_at_position(compiled.mf, compiled.mi, 2, 0, h, z, np.empty(3))
        size = 6 + compiled.n
        compiled.k.whole_at_position(compiled.mf, compiled.mi, 2, compiled.k.WANT_CMM, h, z,
                                     np.empty((6, size)))
    if "bias_at_state" in names:
        compiled.k.bias_at_state(compiled.mf, compiled.mi, 2, True, h, z, z6, z,
                                 np.empty(6 + compiled.n))
    if "horizon" in names:
        compiled.horizon(2, 1, [0], h[None], z[None], z6[None], z[None])
    if "coriolis" in names:
        compiled.coriolis(2, h, z, z6, z)


def _cached(kernel):
    """Whether numba's cache holds ``kernel`` compiled from this source (numba's internals:
    False when they cannot tell)."""
    try:
        return bool(kernel._cache._cache_file._load_index())
    except Exception:               # no cache (in memory), NUMBA_DISABLE_JIT, numba changed
        return False


def _uncached(names):
    """Those of the kernels ``names`` that numba's cache does not hold."""
    kernels = jit_path()
    return tuple(name for name in names if not _cached(getattr(kernels, name)))


def _compile_beside(*stages):
    """A process compiling the kernels of each of ``stages`` (tuples of names) into the
    cache, one stage after the other, saying so on its stdout after each (:func:`_stage_done`);
    None: nothing to compile, or no cache to fill."""
    if jit_status().cache_dir is None or not any(stages):
        return None
    argv = [word for stage in stages for word in ("--", *stage)]
    try:            # (unbuffered: a line read is never two, the next one's select waits)
        process = subprocess.Popen([sys.executable, "-m", __package__, "--only", *argv[1:]],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, cwd=_PACKAGE_PARENT, bufsize=0)
    except OSError:
        return None
    process.stages_read = 0
    return process


def _stage_done(process, stage, timeout=COMPILE_BESIDE_S):
    """Whether ``process`` (:func:`_compile_beside`; None: none) has compiled its stages up
    to ``stage`` (0: the first), or ended, reading its lines (one a stage) and waiting at
    most ``timeout`` seconds for each."""
    while process is not None and process.stages_read <= stage:
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        if not ready:
            return False
        if not process.stdout.readline():
            return True             # (ended: the caller finds what is in the cache)
        process.stages_read += 1
    return True


def _finish(process):
    """Wait for a compiling ``process`` (at most COMPILE_BESIDE_S, then it is killed)."""
    if process is None:
        return
    try:
        process.wait(COMPILE_BESIDE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _no_compilation(kernels, names):
    """Another argument type now: TypeError, no compilation in the middle of a tick (not
    under NUMBA_DISABLE_JIT)."""
    for name in names:
        kernel = getattr(kernels, name)
        if hasattr(kernel, "disable_compile"):
            kernel.disable_compile()


def _await_queries():
    """Wait until the queries' kernels are loaded, unless this is the thread loading them."""
    if threading.current_thread() is not _LOADER[0]:
        _QUERIES_READY.wait()


_LOADER = [None]     # the thread of _load_beside


def _load_beside(compiled, beside, pending):
    """In the background: load each group of ``pending`` (``_BACKGROUND``'s, in its order)
    once ``beside`` (None: none) has compiled it into the cache (~0.1 s each from the
    cache); until then :func:`contacts_ready` and :func:`steady_ready` are False, and
    :meth:`CompiledModel.whole` and :meth:`CompiledModel.frame` wait, in every other
    thread. A group that fails to load, or that ``beside`` did not put in the cache (it
    died: compiled here it would hold this process for seconds), is left: the contact and
    steady kernels are not called (their callers' NumPy and plain ways); the queries'
    compile at their first call, which raises the same."""
    t0 = time.perf_counter()
    for stage, (names, ready) in enumerate(_BACKGROUND, 2):  # (after the parts and the glue)
        if names is _QUERIES:
            _finish(beside)
        else:
            _stage_done(beside, stage)
        if names not in pending:
            continue
        try:
            if names is not _QUERIES and _uncached(names):
                raise RuntimeError(f"not compiled beside: {names}")
            _warm(compiled, names)
            _no_compilation(compiled.k, names)
        except Exception:
            _STATE.setdefault("failed", set()).add(names)
        finally:
            if names is _QUERIES:
                jit_status().queries_seconds = time.perf_counter() - t0
            ready.set()


def queries_ready(timeout=None):
    """Whether the queries' kernels are loaded (waiting at most ``timeout`` seconds; None:
    until they are). False only in the first seconds of a process whose start compiled
    them (:func:`warm_up`); :func:`jit_status`'s ``queries_seconds`` then says how long
    they took after the tick's."""
    return _QUERIES_READY.wait(timeout)


def direct(kernel):
    """(the compiled code of ``kernel``'s one signature, called without numba's dispatch,
    that signature's argument types); None when it has not exactly one (or runs as Python,
    NUMBA_DISABLE_JIT). The dispatch types every argument (a StructRef's in Python code):
    ~1.3 us of the steady tick's ~1.9 us call warm, ~5-7 us in a node at 1 kHz. Not a
    TypeError but memory misread for an argument of another type: a caller checks what it
    passes (:func:`direct_arrays`; a StructRef's ``_numba_type_`` is the signature's)."""
    overloads = getattr(kernel, "overloads", None)
    if not overloads or len(overloads) != 1:
        return None
    (signature, made), = overloads.items()
    return made.entry_point, signature


def direct_call(kernel, given):
    """``kernel``'s compiled code called without numba's dispatch (:func:`direct`) when each
    of ``given`` {argument position: value} (the arguments a caller keeps from call to call;
    it makes the others of their types at each call) is of the signature's type there;
    else ``kernel`` itself (dispatched). Types each value given (~5 us an array): once, when
    the caller learns them, not per call."""
    got = direct(kernel)
    if got is None:
        return kernel
    from numba import typeof
    entry, types = got
    if any(typeof(value) != types[at] for at, value in given.items()):
        return kernel
    return entry


def direct_arrays(*arrays):
    """Whether each of (array, ndim) ``arrays`` is what a kernel's signature takes for it
    (an aligned, writable, C-contiguous float64 ndarray of that many dimensions), so that
    :func:`direct`'s call may take it."""
    for a, ndim in arrays:
        if type(a) is not np.ndarray or a.dtype != _F64 or a.ndim != ndim:
            return False
        flags = a.flags
        if not (flags.c_contiguous and flags.writeable and flags.aligned):
            return False
    return True


def steady_ready(timeout=0.0):
    """Whether the steady tick's kernel (:func:`.kernels.steady_tick`) is loaded (waiting at
    most ``timeout`` seconds; None: until it is, or failed): False only in the first seconds
    of a process whose start compiled it beside (:func:`warm_up`), or where it failed to
    load; until then a caller ticks with :func:`.kernels.tick`."""
    return _STEADY_READY.wait(timeout) and _STEADY not in _STATE.get("failed", ())


def contacts_ready():
    """Whether the kernels of the balance and the contact mechanics (``_CONTACT``:
    :func:`.kernels.balance`, :func:`.kernels.contact_points`, the support hull and its
    margin, a frame's world pose) are loaded: False in the first seconds of a process
    whose start compiled them beside (:func:`warm_up`), or where they failed to load; their
    callers then compute the same in NumPy."""
    return _CONTACT_READY.is_set() and _CONTACT not in _STATE.get("failed", ())


def warm_up(compiled):
    """Compile (or load from the cache) the kernels of the tick, with the signatures the
    calls use, on ``compiled``'s model, once per process; returns the seconds it took (kept
    in :func:`jit_status` the first time). With an empty cache another process compiles the
    tick's last parts (:data:`_TICK_PARTS`) and the glue (which then load from the cache
    here) and after them the other groups, which load here in the background when each is
    done (:func:`_load_beside`; see ``_TICK``); the queries' kernels load in the background
    from a warm cache too (:func:`queries_ready`).
    With no cache at all, everything compiles here, in memory."""
    t0 = time.perf_counter()
    parts = ()
    if _uncached(_TICK) and not _STATE.get("parts_here"):
        parts = tuple(dict.fromkeys(name for name, _ in _TICK_PARTS))
    glue = _uncached(_GLUE)
    later = [_uncached(names) for names, _ in _BACKGROUND]
    later[-1] = later[-1] and later[-1] + _LATER
    beside = _compile_beside(parts, glue, *later)
    if beside is not None:
        _BESIDE.append(beside)
    try:
        _warm(compiled, _TICK)
        # the glue (stage 1) is waited for unless the tick's parts (stage 0) are not
        # compiled yet: the process beside then fell behind this one (a busy machine) and
        # the glue compiles here (_warm) rather than behind them there
        if not parts or _stage_done(beside, 0, timeout=0):
            _stage_done(beside, 1)
    except BaseException:
        if beside is not None:
            beside.kill()
        raise
    _warm(compiled, _GLUE)
    in_memory = beside is None and any(later)      # (no cache to fill: compiled here)
    pending, done = [], _TICK + _GLUE
    for (names, ready), uncached in zip(_BACKGROUND, later):
        if not in_memory and (uncached or names is _QUERIES):   # (not before the first tick)
            ready.clear()
            pending.append(names)
        else:
            _warm(compiled, names)
            done += names
    # (after the steady tick's: compiled here, it compiles the merge of bytes it calls)
    _no_compilation(compiled.k, done)
    if pending:
        _LOADER[0] = threading.Thread(target=_load_beside, args=(compiled, beside, pending),
                                      daemon=True, name="kin_dyn_ros kernels' loader")
        _LOADER[0].start()
    seconds = time.perf_counter() - t0
    status = jit_status()
    if status.compile_seconds is None:
        status.compile_seconds = seconds
    return seconds


_BESIDE = []      # compiling processes still running at exit are ended (atexit)


@atexit.register
def _end_beside():
    for process in _BESIDE:
        if process.poll() is None:
            process.kill()


def ensure_compiled(compiled):
    """:func:`warm_up` on the first model of this process (the kernels do not depend on the
    model's size: later models find them compiled); True when the kernels run. When they
    fail to compile (e.g. a numba too old for them), the process runs the NumPy core from
    then on, the reason in :func:`jit_status`, and this returns False."""
    with _LOCK:
        if _STATE["path"][0] is None:
            return False
        if not _STATE.get("warm"):
            try:
                warm_up(compiled)
            except Exception as exc:        # numba's errors: typing, lowering, LLVM
                reason = f"the kernels failed to compile: {type(exc).__name__}: {exc}"
                _STATE["path"] = None, JitStatus(False, reason.splitlines()[0][:300])
                return False
            _STATE["warm"] = True
        return True


def compiled_kernels():
    """The :mod:`.kernels` module once its kernels are compiled in this process (a model
    was loaded on the compiled path), else None: what the node's glue
    (:func:`.kernels.scatter_words`, :func:`.kernels.merge_joint_state`,
    :func:`.kernels.read_stamped`, :func:`.kernels.share_state`) runs when it can."""
    with _LOCK:
        kernels = _STATE.get("path", (None,))[0]
        return kernels if kernels is not None and _STATE.get("warm") else None


def contact_kernels():
    """:func:`compiled_kernels` once the contact mechanics' are loaded too
    (:func:`contacts_ready`), else None."""
    return compiled_kernels() if contacts_ready() else None


def inputs(*items):
    """Arrays of ``(name, value, shape)`` items as the kernels take them (float64,
    C-contiguous, writable: one compiled signature); ValueError naming the first wrong shape.
    Finiteness is checked by the kernels (``CompiledModel._call`` then names the value)."""
    out = []
    for name, value, shape in items:
        if type(value) is not np.ndarray or value.dtype != _F64 or not _usable(value.flags):
            value = np.array(value, dtype=np.float64, order="C")   # a C-contiguous writable copy
        if value.shape != shape:
            raise ValueError(f"expected {name} with shape {shape}, got {value.shape}")
        out.append(value)
    return out


def _usable(flags):
    return flags.c_contiguous and flags.writeable


_WARM_UP_URDF = (
    '<robot name="warm_up"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
    'izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass '
    'value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')


def prepare(everything=False):
    """Compile (or load from the cache) the kernels now, on a two-link model, when the
    compiled path runs; returns the seconds it took (0 on the NumPy path). The tick's
    process needs the kernels of :func:`warm_up`; ``everything`` adds those compiled at their
    first call (the services' horizon, coriolis), so that a set-up fills the cache."""
    if jit_path() is None:
        return 0.0
    from .computations import KinDynComputations
    t0 = time.perf_counter()
    # (a set-up waits for every group: the process beside has the longest way, and this
    #  one idles once its tick is in; the tick's parts compile here then)
    _STATE["parts_here"] = everything
    kd = KinDynComputations(_WARM_UP_URDF)
    if everything and kd._jit is not None:
        # (this process is idle once the tick's are in: a second process beside the first
        # compiles what that one would compile last, ~30 s of its ~90 with an empty cache)
        helper = _compile_beside(_uncached(_SECOND))
        if helper is not None:
            _BESIDE.append(helper)
        queries_ready()
        _finish(helper)
        _warm(kd._jit, _LATER)
    return time.perf_counter() - t0


def _warm_up_model():
    from .computations import KinDynComputations
    return KinDynComputations(_WARM_UP_URDF, compiled=False).model


def main(argv=None):
    """``python -m kin_dyn_ros.dynamics``: compile (or load) the kernels now and print which
    path runs and how long it took (set-up scripts run it once so that the first node start
    does not compile). ``--only NAME... [-- NAME...]...``: those kernels only, silently,
    one stage after the other, a line after each (what :func:`warm_up` runs beside
    itself)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--only"]:
        kernels = jit_path()
        compiled = kernels and CompiledModel(kernels, _warm_up_model(), np.zeros(3))
        for stage in " ".join(argv[1:]).split("--"):
            names = stage.split()
            if compiled:
                _warm(compiled, names)
            print("compiled", *names, flush=True)       # (what _stage_done waits for)
        return
    seconds = prepare(everything=True)
    print(f"kin_dyn_ros dynamics: {jit_status().describe()}; ready in {seconds:.1f} s")
