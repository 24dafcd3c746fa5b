"""Every public name a torch user reaches through hookgrad's torch-shaped namespaces has a
docstring of its own: the functions and classes of each namespace, the public methods of those
classes, and every Tensor method and property. The text is ours: none opens with the same line
as torch's docstring for that name."""
from __future__ import annotations

import importlib
import inspect

import pytest
import torch

import hookgrad

NAMESPACES = ["hookgrad", "hookgrad.nn", "hookgrad.nn.functional", "hookgrad.nn.init",
              "hookgrad.optim", "hookgrad.optim.lr_scheduler", "hookgrad.autograd",
              "hookgrad.autograd.graph", "hookgrad.autograd.functional", "hookgrad.func",
              "hookgrad.utils.data", "hookgrad.cuda", "hookgrad.distributions",
              "hookgrad.distributions.constraints", "hookgrad.distributions.transforms"]


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None) or dir(module)
    return sorted(name for name in names if not name.startswith("_"))


def _documented_objects():
    """(qualified name, object, its docstring) for every public callable hookgrad defines."""
    seen = set()
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        for name in _public_names(module):
            value = getattr(module, name, None)
            if inspect.ismodule(value) or not callable(value):
                continue
            if not (getattr(value, "__module__", None) or "").startswith("hookgrad"):
                continue  # a re-exported helper from the standard library or typing
            if id(value) in seen:
                continue
            seen.add(id(value))
            doc = value.__doc__ if isinstance(value, type) else inspect.getdoc(value)
            yield f"{namespace}.{name}", value, doc
    for name in dir(hookgrad.Tensor):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(hookgrad.Tensor, name)
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        yield f"Tensor.{name}", member, getattr(member, "__doc__", None)


OBJECTS = list(_documented_objects())


def test_the_walk_reaches_the_whole_api():
    names = {name for name, _, _ in OBJECTS}
    reached = {id(value) for _, value, _ in OBJECTS}
    assert len(OBJECTS) > 800
    for expected in ["randn", "nn.LSTM", "nn.functional.conv2d", "optim.Adam",
                     "optim.lr_scheduler.OneCycleLR", "utils.data.DataLoader",
                     "cuda.is_available", "finfo", "autograd.graph.saved_tensors_hooks",
                     "func.vmap"]:
        module, _, name = f"hookgrad.{expected}".rpartition(".")
        assert id(getattr(importlib.import_module(module), name)) in reached, expected
    for expected in ["Tensor.backward", "Tensor.grad", "Tensor.add_", "Tensor.exp_"]:
        assert expected in names


def test_every_public_name_has_a_docstring():
    missing = [name for name, _, doc in OBJECTS if not (doc or "").strip()]
    assert not missing, f"{len(missing)} public names without a docstring: {missing}"


def _class_members():
    """(qualified name, docstring) for each public method and property a public hookgrad class
    defines; a method that overrides a documented one (``forward``) inherits its docstring."""
    for qualified, value, _ in OBJECTS:
        if not isinstance(value, type) or value is hookgrad.Tensor:
            continue
        for name, member in vars(value).items():
            if name.startswith("_"):
                continue
            function = member.__func__ if isinstance(member, (staticmethod, classmethod)) \
                else member.fget if isinstance(member, property) else member
            if not callable(function):
                continue
            doc = getattr(function, "__doc__", None) or inspect.getdoc(getattr(value, name))
            yield f"{qualified}.{name}", doc


def test_every_public_method_of_a_public_class_has_a_docstring():
    members = list(_class_members())
    assert len(members) > 200
    missing = [name for name, doc in members if not (doc or "").strip()]
    assert not missing, f"{len(missing)} public methods without a docstring: {missing}"


def _torch_counterpart(qualified: str):
    if qualified.startswith("Tensor."):
        owner, name = torch.Tensor, qualified[len("Tensor."):]
    else:
        module, _, name = qualified.rpartition(".")
        try:
            owner = importlib.import_module("torch" + module[len("hookgrad"):])
        except ImportError:
            return None
    return inspect.getattr_static(owner, name, None) if inspect.isclass(owner) \
        else getattr(owner, name, None)


def _first_line(doc) -> str:
    return " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())


def test_docstrings_are_not_torchs():
    same, compared = [], 0
    for name, _, doc in OBJECTS:
        theirs = _torch_counterpart(name)
        theirs_doc = getattr(theirs, "__doc__", None) if theirs is not None else None
        if not (doc and theirs_doc):
            continue
        compared += 1
        if len(_first_line(doc)) > 20 and _first_line(doc) == _first_line(theirs_doc):
            same.append(name)
    assert compared > 400  # most names have a documented torch counterpart
    assert not same, f"docstrings that open as torch's do: {same}"


@pytest.mark.parametrize("name", ["hookgrad.nn.Dropout", "hookgrad.empty_like", "Tensor.numpy",
                                  "Tensor.device"])
def test_a_known_difference_is_stated(name):
    doc = dict((n, d) for n, _, d in OBJECTS)[name]
    assert "differ" in doc.lower() or "hookgrad" in doc.lower()
