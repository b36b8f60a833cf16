"""Per-run state and which run, if any, may still talk to the host. The child serves one run at
a time; output and calls of a run that settled (its terminal frame was sent) or was revoked are
dropped."""


class Run:
    def __init__(self, run_id, binding_keys):
        self.id = run_id
        self.settled = False  # terminal frame selected: no further output or calls
        self.revoked = False  # host asked to stop: output dropped, open calls rejected
        self.pending = {}  # call id -> PendingCall
        self.next_call_id = 1
        self.outstanding_bytes = 0
        self.binding_keys = binding_keys  # {(global, name)} this run may call

    @property
    def can_talk(self):
        return not self.settled and not self.revoked


_active = None


def set_active_run(run):
    global _active
    _active = run


def active_run():
    return _active


def talking_run():
    """The run whose output may still reach the host, or None when it must be dropped."""
    run = _active
    return run if run is not None and run.can_talk else None
