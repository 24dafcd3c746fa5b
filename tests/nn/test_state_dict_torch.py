"""Trained weights move between a hookgrad model and its torch twin, both ways, through files
(hookgrad.save / torch.load, torch.save / hookgrad.load) and directly through load_state_dict."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad


def twin(lib):
    """The same small CNN + MLP, written once for both libraries."""
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(4 * 4 * 4, 16), nn.ReLU(), nn.Linear(16, 3))


INPUTS = np.random.default_rng(0).normal(size=(6, 1, 8, 8)).astype(np.float32)
TARGETS = np.array([0, 1, 2, 0, 1, 2])


def train(lib, model, steps: int = 3):
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(INPUTS)),
                                               lib.from_numpy(TARGETS))
        loss.backward()
        optimizer.step()
    return model.eval()


def outputs(lib, model) -> np.ndarray:
    with lib.no_grad():
        return model(lib.from_numpy(INPUTS)).numpy()


def test_a_hookgrad_trained_model_runs_in_torch_from_a_file(tmp_path):
    hookgrad.manual_seed(1)
    ours = train(hookgrad, twin(hookgrad))
    hookgrad.save(ours.state_dict(), tmp_path / "model.pt")
    theirs = twin(torch).eval()
    result = theirs.load_state_dict(torch.load(tmp_path / "model.pt", weights_only=True))
    assert not result.missing_keys and not result.unexpected_keys
    np.testing.assert_allclose(outputs(torch, theirs), outputs(hookgrad, ours), rtol=1e-5,
                               atol=1e-6)
    assert int(theirs[1].num_batches_tracked) == 3


def test_a_torch_trained_model_runs_in_hookgrad_from_a_file(tmp_path):
    torch.manual_seed(1)
    theirs = train(torch, twin(torch))
    torch.save(theirs.state_dict(), tmp_path / "model.pt")
    ours = twin(hookgrad).eval()
    ours.load_state_dict(hookgrad.load(tmp_path / "model.pt"))
    np.testing.assert_allclose(outputs(hookgrad, ours), outputs(torch, theirs), rtol=1e-5,
                               atol=1e-6)
    assert int(ours[1].num_batches_tracked) == 3


def test_a_torch_state_dict_loads_directly_without_a_file():
    torch.manual_seed(2)
    theirs = train(torch, twin(torch))
    ours = twin(hookgrad).eval()
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_allclose(outputs(hookgrad, ours), outputs(torch, theirs), rtol=1e-5,
                               atol=1e-6)
    weight = ours[0].weight
    assert isinstance(weight, hookgrad.nn.Parameter) and weight.requires_grad


def test_assign_keeps_torch_memory_without_copying():
    theirs = twin(torch)
    ours = twin(hookgrad)
    ours.load_state_dict(theirs.state_dict(), assign=True)
    assert np.shares_memory(ours[5].weight.detach().numpy(), theirs[5].weight.detach().numpy())
    assert isinstance(ours[5].weight, hookgrad.nn.Parameter)


def test_training_continues_the_same_after_moving_to_torch(tmp_path):
    hookgrad.manual_seed(3)
    ours = train(hookgrad, twin(hookgrad), steps=1).train()
    hookgrad.save(ours.state_dict(), tmp_path / "model.pt")
    theirs = twin(torch)
    theirs.load_state_dict(torch.load(tmp_path / "model.pt", weights_only=True))
    train(hookgrad, ours, steps=2)
    train(torch, theirs.train(), steps=2)
    np.testing.assert_allclose(outputs(torch, theirs), outputs(hookgrad, ours), rtol=1e-4,
                               atol=1e-5)


def test_mismatched_shapes_from_torch_are_reported_as_torch_reports_them():
    theirs = torch.nn.Linear(3, 2)
    ours = hookgrad.nn.Linear(4, 2)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        ours.load_state_dict(theirs.state_dict())


def test_a_bfloat16_torch_state_dict_loads_as_torch_loads_it():
    pytest.importorskip("ml_dtypes")
    source = torch.nn.Linear(3, 2).to(torch.bfloat16)
    ours, theirs = hookgrad.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    ours.load_state_dict(source.state_dict())
    theirs.load_state_dict(source.state_dict())
    for name, value in theirs.state_dict().items():
        assert repr(ours.state_dict()[name].dtype) == repr(value.dtype)
        np.testing.assert_array_equal(ours.state_dict()[name].numpy(), value.numpy())
