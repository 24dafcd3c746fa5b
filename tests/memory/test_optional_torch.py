"""torch stays optional: the memory tools on hookgrad models never import it."""
import os
import subprocess
import sys
import textwrap

_SCRIPT = textwrap.dedent("""
    import sys
    import hookgrad
    from hookgrad import memory, nn

    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh())
    x = hookgrad.randn(32, 8)
    with memory.ledger(model=model) as led:
        with memory.quantize(8):
            model(x).sum().backward()
    with memory.offload(sys.argv[1]):
        loss = model(x).sum()
    loss.backward()
    for saver in (memory.cast("bfloat16"), memory.recompute()):
        with memory.policy({"0": saver, "2": memory.quantize(4)}, model=model):
            model(x).sum().backward()
    found = memory.plan(model, x, budget_bytes=2000, budget_on="saved")
    assert led.total > 0 and found.policy is not None, (led, found)
    print("torch imported:", "torch" in sys.modules)
""")


def test_memory_tools_on_hookgrad_models_leave_torch_unimported(tmp_path):
    source = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    environment = dict(os.environ, PYTHONPATH=os.path.abspath(source))
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "torch imported: False"
