"""The server's gate (ui/work.py): students queue for the one place, the lecturer goes past them, a run replaced
while it waits leaves the line, and a lab call gives the place up while it waits."""

import threading
import time

from ui.work import LECTURER, STUDENT, Gate


def test_the_gate_queues_students_and_lets_the_lecturer_past():
    gate, order = Gate(1), []

    def run(name, priority, hold):
        gate.enter(priority)
        order.append(name)
        time.sleep(hold)
        gate.leave()

    first = threading.Thread(target=run, args=("first", STUDENT, 0.4))
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=run, args=("second", STUDENT, 0.0))
    second.start()
    time.sleep(0.1)
    assert gate.waiting == 1
    lecturer = threading.Thread(target=run, args=("lecturer", LECTURER, 0.0))
    lecturer.start()
    for t in (first, second, lecturer):
        t.join(5)
    assert order == ["first", "lecturer", "second"] and gate.inside == 0


def test_a_run_replaced_while_it_waits_leaves_the_line():
    gate = Gate(1)
    gate.enter()  # this thread holds the only place

    def replaced():
        raise RuntimeError("a newer run of this session")

    errors = []

    def other():
        try:
            gate.enter(STUDENT, check=replaced)
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    t.join(5)
    assert errors and gate.waiting == 0
    gate.leave()
    assert gate.inside == 0


def test_a_lab_call_gives_the_gate_up_while_it_waits():
    """A student's hanging lab function takes its whole time limit: meanwhile the page's place goes to the
    next run (ui.work.GatedPool), and the page takes it back after."""
    from ui.work import GatedPool

    gate, entered = Gate(1), threading.Event()

    class SlowPool:
        def start(self):
            pass

        def call(self, *args, **kwargs):
            assert entered.wait(5), "another run got the place while this call waited"
            return "reply"

    def other():
        gate.enter()
        entered.set()
        gate.leave()

    gate.enter()  # this page's run holds the only place
    t = threading.Thread(target=other)
    t.start()
    assert GatedPool(SlowPool(), gate).call("handle") == "reply"
    assert gate.holding() and gate.inside == 1  # taken back
    t.join(5)
    gate.leave()
    assert gate.inside == 0
