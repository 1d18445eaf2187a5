"""The collector settings of a streaming process: frozen startup objects, spaced collections."""

from __future__ import annotations

from support.fresh_process import in_fresh_process

from collector.core.gc_settings import OLDER_THRESHOLD, YOUNG_THRESHOLD


def test_settling_freezes_what_is_alive_and_spaces_collections() -> None:
    out = in_fresh_process(
        """
        import gc
        from collector.core.gc_settings import settle_for_streaming
        kept = [[] for _ in range(1000)]
        before = gc.get_freeze_count()
        settle_for_streaming()
        print(gc.get_freeze_count() - before >= 1000, *gc.get_threshold())
        """
    )
    assert out.split() == ["True", str(YOUNG_THRESHOLD), str(OLDER_THRESHOLD), str(OLDER_THRESHOLD)]


def test_young_cycles_are_still_collected() -> None:
    # An exception kept with its traceback is a cycle; a plug-in evaluator raising on
    # every trace must not grow the process until a full collection.
    out = in_fresh_process(
        f"""
        import gc, weakref
        from collector.core.gc_settings import settle_for_streaming
        settle_for_streaming()

        class Node:
            pass

        refs = []
        for _ in range({YOUNG_THRESHOLD} * 3):
            node = Node()
            node.self = node
            refs.append(weakref.ref(node))
            del node
        print(sum(ref() is not None for ref in refs))
        """
    )
    assert int(out) <= YOUNG_THRESHOLD


def test_streaming_collector_restores_what_it_found() -> None:
    out = in_fresh_process(
        """
        import gc
        from collector.core.gc_settings import streaming_collector
        gc.set_threshold(1234, 5, 6)
        kept = [[] for _ in range(1000)]
        with streaming_collector():
            inside = (gc.get_freeze_count() >= 1000, *gc.get_threshold())
        print(*inside, gc.get_freeze_count(), *gc.get_threshold())
        """
    )
    young, older = str(YOUNG_THRESHOLD), str(OLDER_THRESHOLD)
    assert out.split() == ["True", young, older, older, "0", "1234", "5", "6"]


def test_streaming_collector_restores_on_error() -> None:
    out = in_fresh_process(
        """
        import gc
        from collector.core.gc_settings import streaming_collector
        before = gc.get_threshold()
        try:
            with streaming_collector():
                raise KeyError
        except KeyError:
            pass
        print(gc.get_freeze_count(), gc.get_threshold() == before)
        """
    )
    assert out.split() == ["0", "True"]


def test_overlapping_blocks_restore_once_the_last_one_leaves() -> None:
    # Two replays in two threads (or nested): the first to enter settles, the last to
    # leave restores; an early leaver must not leave the other on CPython's settings,
    # nor the process on the streaming ones.
    out = in_fresh_process(
        """
        import gc, threading
        from collector.core.gc_settings import streaming_collector
        gc.set_threshold(1234, 5, 6)
        entered, leave_a, a_left = threading.Event(), threading.Event(), threading.Event()

        def a():
            with streaming_collector():
                entered.set()
                leave_a.wait()
            a_left.set()

        thread = threading.Thread(target=a)
        thread.start()
        entered.wait()
        with streaming_collector():
            with streaming_collector():
                pass
            nested_left = gc.get_threshold()[0]
            leave_a.set()
            a_left.wait()
            a_gone = gc.get_threshold()[0]
        thread.join()
        print(nested_left, a_gone, *gc.get_threshold(), gc.get_freeze_count())
        """
    )
    young = str(YOUNG_THRESHOLD)
    assert out.split() == [young, young, "1234", "5", "6", "0"]


def test_a_hosts_own_frozen_objects_stay_frozen() -> None:
    out = in_fresh_process(
        """
        import gc
        from collector.core.gc_settings import streaming_collector
        kept = [[] for _ in range(1000)]
        gc.freeze()
        frozen = gc.get_freeze_count()
        with streaming_collector():
            inside = gc.get_freeze_count() == frozen
        print(inside, gc.get_freeze_count() == frozen)
        """
    )
    assert out.split() == ["True", "True"]
