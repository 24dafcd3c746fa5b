"""nn.Module, Parameter and the containers against torch: each scenario is ``scenario(lib, log)``,
run under both libraries, and the logs (names, shapes, values, reprs, error messages) must match."""
import copy
import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad


def describe(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(describe(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, describe(v)) for k, v in value.items()))
    if isinstance(value, (torch.Tensor, hookgrad.Tensor)):
        array = value.detach().numpy()
        return ("T", type(value).__name__, tuple(value.shape), str(value.dtype),
                value.requires_grad, tuple(array.astype(np.float64).ravel().round(9)))
    return type(value).__name__


def model_classes(lib):
    class Lin(lib.nn.Module):
        def __init__(self, in_features, out_features, bias=True, seed=0):
            super().__init__()
            rng = np.random.default_rng(seed)
            self.in_features, self.out_features = in_features, out_features
            self.weight = lib.nn.Parameter(lib.tensor(rng.standard_normal((out_features,
                                                                            in_features))))
            if bias:
                self.bias = lib.nn.Parameter(lib.tensor(rng.standard_normal(out_features)))
            else:
                self.register_parameter("bias", None)

        def forward(self, x):
            out = x @ self.weight.t()
            return out if self.bias is None else out + self.bias

        def extra_repr(self):
            return (f"in_features={self.in_features}, out_features={self.out_features}, "
                    f"bias={self.bias is not None}")

    class Norm(lib.nn.Module):
        """Has a persistent float buffer, an int buffer and a non-persistent buffer."""

        def __init__(self, size):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(size, dtype=lib.float64))
            self.register_buffer("running_mean", lib.zeros(size, dtype=lib.float64))
            self.register_buffer("num_batches", lib.tensor(0))
            self.register_buffer("scratch", lib.zeros(size, dtype=lib.float64), persistent=False)

        def forward(self, x):
            return (x - self.running_mean) * self.scale

    return Lin, Norm


def build_model(lib):
    Lin, Norm = model_classes(lib)
    return lib.nn.Sequential(
        Lin(3, 4, seed=1), Norm(4),
        lib.nn.Sequential(Lin(4, 4, bias=False, seed=2), lib.nn.Identity()),
        lib.nn.ModuleList([Lin(4, 2, seed=3), Lin(4, 2, seed=3), Norm(2)]),
        lib.nn.ModuleDict({"head": Lin(2, 1, seed=4), "flat": lib.nn.Flatten()}),
    )


def assert_same_log(scenario):
    logs = []
    for lib in (torch, hookgrad):
        log = []
        scenario(lib, log)
        logs.append(log)
    assert logs[1] == logs[0]
    assert logs[0]


def errors(log, *calls):
    """Log the type and message of the error each call raises (or that it did not raise)."""
    for call in calls:
        try:
            call()
            log.append("no error")
        except Exception as error:  # noqa: BLE001 - the type is what is compared
            # hookgrad names its classes by their own module path; torch's texts say torch.
            log.append((type(error).__name__, str(error).replace("hookgrad.", "torch.")))


# -- Parameter ---------------------------------------------------------------------------------
def parameter_basics(lib, log):
    data = lib.tensor([1.0, 2.0])
    param = lib.nn.Parameter(data)
    log.append((repr(param), param.requires_grad, param.is_leaf, param.grad_fn,
                isinstance(param, lib.Tensor), type(param).__name__))
    data.add_(1)  # shares data and version counter with the wrapped tensor
    log.append((describe(param), param._version))
    frozen = lib.nn.Parameter(lib.tensor([1, 2]), requires_grad=False)
    log.append((repr(frozen), frozen.requires_grad))
    log.append(repr(lib.nn.Parameter()))
    errors(log, lambda: lib.nn.Parameter(lib.tensor([1, 2])))
    (param * 2).sum().backward()
    log.append(("grad", describe(param.grad)))


def parameter_copies(lib, log):
    param = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    clone = copy.deepcopy(param)
    revived = pickle.loads(pickle.dumps(param))
    for other in (clone, revived):
        log.append((type(other).__name__, describe(other), other is param))


# -- registration ------------------------------------------------------------------------------
def registration(lib, log):
    model = build_model(lib)
    log.append([(name, describe(p)[2]) for name, p in model.named_parameters()])
    log.append([(name, describe(b)[2]) for name, b in model.named_buffers()])
    log.append([name for name, _ in model.named_modules()])
    log.append([name for name, _ in model.named_children()])
    log.append([name for name, _ in model.named_parameters(prefix="net", recurse=True)])
    log.append([name for name, _ in model[0].named_parameters(recurse=False)])
    log.append([name for name, _ in model.named_modules(prefix="top")])
    log.append((len(list(model.parameters())), len(list(model.buffers())),
                len(list(model.modules())), len(list(model.children()))))
    log.append(model.get_submodule("3.2") is model[3][2])
    log.append(model.get_parameter("0.weight") is model[0].weight)
    log.append(model.get_buffer("1.running_mean") is model[1].running_mean)


def shared_parameters_and_modules(lib, log):
    Lin, _ = model_classes(lib)
    layer = Lin(2, 2)
    model = lib.nn.Sequential(layer, layer, Lin(2, 2))
    model[2].weight = layer.weight
    log.append([name for name, _ in model.named_parameters()])
    log.append([name for name, _ in model.named_parameters(remove_duplicate=False)])
    log.append([name for name, _ in model.named_modules()])
    log.append([name for name, _ in model.named_modules(remove_duplicate=False)])
    log.append([name for name, _ in model.named_children()])


def attribute_protocol(lib, log):
    Lin, _ = model_classes(lib)
    model = lib.nn.Module()
    model.weight = lib.nn.Parameter(lib.ones(2))
    model.register_buffer("stat", lib.zeros(2))
    model.child = Lin(1, 1)
    model.plain = 3
    log.append((sorted(model._parameters), sorted(model._buffers), sorted(model._modules),
                "plain" in model.__dict__))
    model.child = None
    model.weight = None
    model.stat = None
    log.append((describe(model._parameters), describe(model._buffers), describe(model._modules)))
    model.weight = lib.nn.Parameter(lib.ones(1))
    model.stat = lib.ones(3)
    log.append(describe(model.stat))
    model.stat = lib.nn.Parameter(lib.ones(1))  # a Parameter moves the name to _parameters
    log.append((sorted(model._parameters), sorted(model._buffers)))
    del model.stat
    del model.plain
    log.append((sorted(model._parameters), hasattr(model, "stat"), hasattr(model, "plain")))
    names = dir(model)
    log.append(("weight" in names, "child" in names, "forward" in names))
    errors(log, lambda: model.missing)


def registration_errors(lib, log):
    model = lib.nn.Module()
    model.plain = 1
    model.weight = lib.nn.Parameter(lib.ones(1))
    model.child = lib.nn.Identity()
    model.register_buffer("stat", lib.ones(1))
    errors(log,
           lambda: model.register_parameter("plain", lib.nn.Parameter(lib.ones(1))),
           lambda: model.register_buffer("weight", lib.ones(1)),
           lambda: model.register_parameter("a.b", None),
           lambda: model.register_buffer("", None),
           lambda: model.add_module("x.y", lib.nn.Identity()),
           lambda: model.register_parameter(3, None),
           lambda: model.register_parameter("p", lib.ones(2)),
           lambda: model.register_buffer("b", 3),
           lambda: model.add_module("m", 3),
           lambda: setattr(model, "weight", lib.ones(1)),
           lambda: setattr(model, "child", 3),
           lambda: setattr(model, "stat", 3),
           lambda: model.register_parameter(
               "q", lib.nn.Parameter(lib.ones(1)) * 2),
           lambda: model.get_submodule("child.nope"),
           lambda: model.get_submodule("plain"),
           lambda: model.get_parameter("stat"),
           lambda: model.get_buffer("weight"),
           lambda: model(1),
           lambda: model.train("yes"))


def uninitialised_module_errors(lib, log):
    class Early(lib.nn.Module):
        def __init__(self, what):
            if what == "param":
                self.p = lib.nn.Parameter(lib.ones(1))
            elif what == "module":
                self.m = lib.nn.Identity()
            else:
                self.register_buffer("b", lib.ones(1))

    errors(log, *[lambda what=what: Early(what) for what in ("param", "module", "buffer")])


def buffer_marker(lib, log):
    model = lib.nn.Module()
    source = lib.ones(2, requires_grad=True)
    marker = lib.nn.Buffer(source)
    log.append((type(marker).__name__, isinstance(marker, lib.nn.Buffer),
                isinstance(source, lib.nn.Buffer), marker is source, marker.requires_grad,
                marker.is_leaf))
    model.kept = marker
    model.dropped = lib.nn.Buffer(lib.ones(2), persistent=False)
    log.append((sorted(model._buffers), sorted(model._non_persistent_buffers_set),
                list(model.state_dict()), model.kept is marker))


# -- state_dict --------------------------------------------------------------------------------
def state_dict_contents(lib, log):
    model = build_model(lib)
    state = model.state_dict()
    log.append((type(state).__name__, [(k, describe(v)) for k, v in state.items()]))
    log.append(dict(state._metadata))
    log.append(state["0.weight"] is model[0].weight)
    kept = model.state_dict(keep_vars=True)
    log.append((kept["0.weight"] is model[0].weight, type(kept["0.weight"]).__name__))
    state["0.weight"].mul_(0)  # detached but sharing memory
    log.append(describe(model[0].weight))
    prefixed = model[0].state_dict(prefix="enc.")
    log.append(list(prefixed))


def state_dict_round_trip(lib, log):
    source, target = build_model(lib), build_model(lib)
    for param in source.parameters():
        param.data.mul_(3)
    source[1].running_mean.add_(2)
    weight = target[0].weight
    result = target.load_state_dict(source.state_dict())
    log.append((repr(result), result.missing_keys, result.unexpected_keys))
    log.append(weight is target[0].weight)
    log.append([(k, describe(v)) for k, v in target.state_dict().items()])
    log.append(describe(target[1].scratch))


def load_state_dict_errors(lib, log):
    model = build_model(lib)
    state = model.state_dict()
    del state["0.bias"]
    del state["1.num_batches"]
    state["extra"] = lib.ones(1)
    state["3.0.unknown"] = lib.ones(1)
    state["9.weight"] = lib.ones(1)
    errors(log, lambda: model.load_state_dict(state))
    result = model.load_state_dict(state, strict=False)
    log.append((repr(result), str(result)))
    wrong = build_model(lib).state_dict()
    wrong["0.weight"] = lib.ones(2, 2, dtype=lib.float64)
    wrong["1.scale"] = "text"
    errors(log, lambda: model.load_state_dict(wrong),
           lambda: model.load_state_dict([("a", 1)]))


def load_state_dict_scalar_from_one_element(lib, log):
    model = lib.nn.Module()
    model.register_buffer("count", lib.tensor(0.0))
    log.append(repr(model.load_state_dict({"count": lib.tensor([5.0])})))
    log.append(describe(model.count))


def load_state_dict_assign(lib, log):
    Lin, _ = model_classes(lib)
    model = Lin(2, 2)
    new_weight = lib.ones(2, 2, dtype=lib.float64)
    model.load_state_dict({"weight": new_weight, "bias": lib.zeros(2, dtype=lib.float64)},
                          assign=True)
    log.append((type(model.weight).__name__, model.weight.requires_grad,
                describe(model.weight)))


def state_dict_hooks(lib, log):
    Lin, _ = model_classes(lib)
    model = lib.nn.Sequential(Lin(2, 2))
    model[0].register_state_dict_pre_hook(lambda m, prefix, keep: log.append(("pre", prefix)))

    def post(module, state, prefix, metadata):
        log.append(("post", prefix, list(state), metadata))
        state[prefix + "added"] = lib.ones(1)

    model[0].register_state_dict_post_hook(post)
    state = model.state_dict()
    log.append(list(state))
    model[0].register_load_state_dict_pre_hook(
        lambda m, sd, prefix, *rest: log.append(("load pre", type(m).__name__, prefix)))
    model.register_load_state_dict_post_hook(
        lambda m, keys: log.append(("load post", type(m).__name__, keys.unexpected_keys)))
    model.load_state_dict(state, strict=False)


# -- modes and bulk changes --------------------------------------------------------------------
def train_eval_and_apply(lib, log):
    model = build_model(lib)
    log.append([m.training for m in model.modules()])
    log.append(model.eval() is model)
    log.append([m.training for m in model.modules()])
    model[3].train()
    log.append([m.training for m in model.modules()])
    visited = []
    model.apply(lambda m: visited.append(type(m).__name__))
    log.append(visited)


def zero_grad_and_requires_grad(lib, log):
    Lin, _ = model_classes(lib)
    model = Lin(2, 2)
    model(lib.ones(3, 2, dtype=lib.float64)).sum().backward()
    model.zero_grad(set_to_none=False)
    log.append([describe(p.grad) for p in model.parameters()])
    model.zero_grad()
    log.append([p.grad for p in model.parameters()])
    model.requires_grad_(False)
    log.append([p.requires_grad for p in model.parameters()])


def casting(lib, log):
    model = build_model(lib)
    weight = model[0].weight
    model[0].weight.grad = lib.ones(4, 3, dtype=lib.float64)
    log.append(model.float() is model)
    log.append((model[0].weight is weight, str(weight.dtype), str(weight.grad.dtype),
                type(weight).__name__, weight.requires_grad))
    log.append([(name, str(t.dtype)) for name, t in model.state_dict().items()])
    model.to(lib.float64)
    log.append([(name, str(t.dtype)) for name, t in model.state_dict().items()])
    model.half()
    log.append(str(model[1].running_mean.dtype))
    model.double()
    model.to("cpu")
    model.to(lib.ones(1, dtype=lib.float32))
    model.to("cpu", lib.float64)
    model.to(dtype=lib.float32)
    log.append([(name, str(t.dtype)) for name, t in model.state_dict().items()])
    errors(log, lambda: model.to(lib.int64))


# -- repr --------------------------------------------------------------------------------------
def reprs(lib, log):
    log.append(repr(build_model(lib)))
    Lin, _ = model_classes(lib)
    log.append(repr(lib.nn.ModuleList([Lin(2, 2), Lin(2, 2), Lin(3, 3), Lin(2, 2)])))
    log.append(repr(lib.nn.Sequential()))
    log.append(repr(lib.nn.ModuleList()))
    log.append(repr(lib.nn.ModuleDict()))
    log.append(repr(lib.nn.Unflatten(1, (2, 3))))

    class Multi(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = lib.nn.Sequential(lib.nn.Identity())
            self.none = None
            self.register_module("empty", None)

        def extra_repr(self):
            return "first line\nsecond line"

    log.append(repr(Multi()))
    log.append(repr(lib.nn.Sequential(Multi())))


# -- containers --------------------------------------------------------------------------------
def sequential_operations(lib, log):
    Lin, _ = model_classes(lib)
    layers = [Lin(2, 2, seed=i) for i in range(4)]
    seq = lib.nn.Sequential(*layers[:3])
    log.append((len(seq), seq[0] is layers[0], seq[-1] is layers[2],
                [m is layer for m, layer in zip(seq, layers)]))
    sliced = seq[1:]
    log.append((type(sliced).__name__, list(sliced._modules), sliced[0] is layers[1]))
    seq.append(layers[3])
    seq[0] = layers[3]
    log.append([layers.index(m) for m in seq])
    del seq[1]
    log.append((list(seq._modules), [layers.index(m) for m in seq]))
    seq.insert(1, layers[0])
    log.append([layers.index(m) for m in seq])
    popped = seq.pop(0)
    log.append((layers.index(popped), [layers.index(m) for m in seq]))
    seq.extend([layers[1]])
    log.append([layers.index(m) for m in seq])
    log.append([layers.index(m) for m in (seq + lib.nn.Sequential(layers[2]))])
    log.append([layers.index(m) for m in seq * 2])
    seq *= 2
    seq += lib.nn.Sequential(layers[0])
    log.append((len(seq), list(seq._modules)[-1]))
    named = lib.nn.Sequential(__import__("collections").OrderedDict(a=layers[0], b=layers[1]))
    log.append((list(named._modules), named.a is layers[0]))
    x = lib.tensor(np.arange(4.0).reshape(2, 2))
    log.append(describe(lib.nn.Sequential(layers[0], layers[1])(x)))
    errors(log, lambda: seq[100], lambda: seq + 1, lambda: seq * 0, lambda: seq * 1.5,
           lambda: seq.insert(100, layers[0]))
    log.append([k for k in dir(seq) if k.isdigit()])


def module_list_operations(lib, log):
    Lin, _ = model_classes(lib)
    layers = [Lin(2, 2, seed=i) for i in range(4)]
    mlist = lib.nn.ModuleList(layers[:2])
    mlist.append(layers[2])
    mlist.extend([layers[3]])
    log.append([layers.index(m) for m in mlist])
    mlist.insert(0, layers[3])
    log.append([layers.index(m) for m in mlist])
    mlist[1] = layers[2]
    log.append((mlist[-1] is layers[3], [layers.index(m) for m in mlist[1:3]],
                type(mlist[1:3]).__name__))
    del mlist[0]
    log.append((list(mlist._modules), [layers.index(m) for m in mlist]))
    log.append(layers.index(mlist.pop(1)))
    log.append([layers.index(m) for m in mlist + lib.nn.ModuleList([layers[0]])])
    mlist += [layers[1]]
    log.append((len(mlist), [name for name, _ in mlist.named_parameters()]))
    errors(log, lambda: mlist[10], lambda: mlist.extend(3), lambda: mlist(1))


def module_dict_operations(lib, log):
    Lin, _ = model_classes(lib)
    layers = [Lin(2, 2, seed=i) for i in range(3)]
    mdict = lib.nn.ModuleDict({"a": layers[0]})
    mdict["b"] = layers[1]
    mdict.update([("c", layers[2])])
    log.append((list(mdict), list(mdict.keys()), len(mdict), "b" in mdict,
                [layers.index(m) for m in mdict.values()],
                [(k, layers.index(m)) for k, m in mdict.items()]))
    log.append(layers.index(mdict.pop("a")))
    del mdict["b"]
    log.append(list(mdict))
    mdict.clear()
    log.append(len(mdict))
    errors(log, lambda: mdict.update(3), lambda: mdict.update([("x",)]), lambda: mdict["zz"])


def flatten_unflatten(lib, log):
    x = lib.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    flat = lib.nn.Flatten()(x)
    partial = lib.nn.Flatten(0, 1)(x)
    back = lib.nn.Unflatten(1, (3, 4))(flat)
    log.append((describe(flat), describe(partial), describe(back)))
    (back * lib.tensor(np.arange(24.0).reshape(2, 3, 4))).sum().backward()
    log.append(describe(x.grad))
    log.append((repr(lib.nn.Flatten()), repr(lib.nn.Identity(3, unused=True))))
    errors(log, lambda: lib.nn.Unflatten(1, 3), lambda: lib.nn.Unflatten(1, (2.0, 3)))


@pytest.mark.parametrize("scenario", [
    parameter_basics, parameter_copies, registration, shared_parameters_and_modules,
    attribute_protocol, registration_errors, uninitialised_module_errors, buffer_marker,
    state_dict_contents, state_dict_round_trip, load_state_dict_errors,
    load_state_dict_scalar_from_one_element, load_state_dict_assign, state_dict_hooks,
    train_eval_and_apply, zero_grad_and_requires_grad, casting, reprs, sequential_operations,
    module_list_operations, module_dict_operations, flatten_unflatten])
def test_module_matches_torch(scenario):
    assert_same_log(scenario)


def test_module_deepcopy_is_independent():
    model = build_model(hookgrad)
    clone = copy.deepcopy(model)
    clone[0].weight.data.mul_(0)
    assert clone[0].weight is not model[0].weight
    assert isinstance(clone[0].weight, hookgrad.nn.Parameter)
    assert float(model[0].weight.abs().sum()) > 0
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in model.named_parameters()]


class PicklableNet(hookgrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = hookgrad.nn.Parameter(hookgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
        self.register_buffer("count", hookgrad.tensor(3))
        self.inner = hookgrad.nn.Sequential(hookgrad.nn.Identity(), hookgrad.nn.Flatten())


def test_module_pickle_round_trip_keeps_parameters():
    model = PicklableNet()
    revived = pickle.loads(pickle.dumps(model))
    assert type(revived.weight) is hookgrad.nn.Parameter and revived.weight.requires_grad
    np.testing.assert_array_equal(revived.weight.detach().numpy(), model.weight.detach().numpy())
    assert revived.count.item() == 3 and revived.count is not model.count
    assert repr(revived) == repr(model)


@pytest.mark.parametrize("lib", [torch, hookgrad])
def test_deepcopy_rebinds_load_state_dict_pre_hook_to_the_copy(lib):
    seen = []
    model = lib.nn.Sequential(lib.nn.Identity())
    model.register_load_state_dict_pre_hook(lambda module, *rest: seen.append(module))
    clone = copy.deepcopy(model)
    clone.load_state_dict({})
    assert seen == [clone]


# -- random module trees -----------------------------------------------------------------------
def tree_from_spec(lib, spec):
    """spec: nested lists (Sequential), tuples (ModuleList), dicts (ModuleDict), ints (a Lin
    layer of that size), None (Identity)."""
    Lin, _ = model_classes(lib)
    if isinstance(spec, list):
        return lib.nn.Sequential(*[tree_from_spec(lib, s) for s in spec])
    if isinstance(spec, tuple):
        return lib.nn.ModuleList([tree_from_spec(lib, s) for s in spec])
    if isinstance(spec, dict):
        return lib.nn.ModuleDict({k: tree_from_spec(lib, s) for k, s in spec.items()})
    if spec is None:
        return lib.nn.Identity()
    return Lin(spec, spec, bias=spec % 2 == 0, seed=spec)


SPECS = st.recursive(
    st.one_of(st.none(), st.integers(1, 3)),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=2)),
    max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(SPECS)
def test_random_trees_match_torch(spec):
    views = []
    for lib in (torch, hookgrad):
        model = tree_from_spec(lib, spec)
        views.append((repr(model), [n for n, _ in model.named_modules()],
                      [(n, tuple(p.shape)) for n, p in model.named_parameters()],
                      list(model.state_dict()), len(list(model.children()))))
    assert views[1] == views[0]


# -- with the library's own layers -------------------------------------------------------------
def layered_model(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Sequential(nn.Linear(16, 8), nn.Dropout(0.25), nn.Tanh()),
        nn.ModuleList([nn.Linear(8, 8) for _ in range(3)]),
        nn.ModuleDict({"head": nn.Linear(8, 2, bias=False), "act": nn.LogSoftmax(dim=1)}),
        nn.LayerNorm(2))


def test_repr_of_nested_layers_equals_torch():
    assert repr(layered_model(hookgrad)) == repr(layered_model(torch))


def test_torch_state_dict_loads_into_hookgrad_model():
    """Keys, shapes and dtypes agree; torch's values loaded through NumPy give torch's outputs."""
    torch_model, model = layered_model(torch).double().eval(), layered_model(hookgrad).double()
    model.eval()
    source = torch_model.state_dict()
    assert [(k, tuple(v.shape), str(v.dtype)) for k, v in model.state_dict().items()] == \
        [(k, tuple(v.shape), str(v.dtype)) for k, v in source.items()]
    result = model.load_state_dict({k: hookgrad.tensor(v.numpy()) for k, v in source.items()})
    assert repr(result) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((3, 1, 4, 4))

    def run(net, lib):
        hidden = net[:6](lib.tensor(x))
        for layer in net[6]:
            hidden = layer(hidden)
        return net[8](net[7]["act"](net[7]["head"](hidden)))

    np.testing.assert_allclose(run(model, hookgrad).detach().numpy(),
                               run(torch_model, torch).detach().numpy(), rtol=1e-9, atol=1e-12)


def registration_hooks_and_set_submodule(lib, log):
    mm = lib.nn.modules.module
    handles = [
        mm.register_module_parameter_registration_hook(
            lambda m, name, p: log.append(("param", type(m).__name__, name))),
        mm.register_module_buffer_registration_hook(
            lambda m, name, b: log.append(("buffer", name, describe(b))) or
            (None if b is None else b * 2)),
        mm.register_module_module_registration_hook(
            lambda m, name, sub: log.append(("module", name, type(sub).__name__))),
    ]
    try:
        model = lib.nn.Module()
        model.weight = lib.nn.Parameter(lib.ones(1))
        model.register_parameter("bias", None)
        model.register_buffer("stat", lib.ones(2))
        model.stat = lib.ones(2)
        model.child = lib.nn.Sequential(lib.nn.Identity())
        log.append(describe(model.stat))
        model.set_submodule("child.0", lib.nn.Flatten())
        model.set_submodule("extra", lib.nn.Identity())
        log.append([name for name, _ in model.named_modules()])
    finally:
        for handle in handles:
            handle.remove()
    plain = lib.nn.Module()
    plain.plain = 3
    errors(log, lambda: plain.set_submodule("", lib.nn.Identity()),
           lambda: plain.set_submodule("a", 3),
           lambda: plain.set_submodule("a", lib.nn.Identity(), strict=True),
           lambda: plain.set_submodule("plain", lib.nn.Identity()),
           lambda: setattr(plain, "plain", lib.nn.Buffer(lib.ones(1))))


def test_registration_hooks_and_set_submodule_match_torch():
    assert_same_log(registration_hooks_and_set_submodule)
