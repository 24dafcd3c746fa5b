"""The less common losses (functional and module forms) against torch: values, gradients,
double backward, every reduction, and torch's errors."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, double_backward

R = np.random.default_rng(3)
X = R.standard_normal((4, 5))
Y = R.standard_normal((4, 5))
SIGNS = np.where(R.random((4, 5)) < .5, -1.0, 1.0)
ROW_SIGNS = np.array([1.0, -1.0, -1.0, 1.0])
LOG_P = np.log(np.abs(R.standard_normal((4, 5))) + .1)
PROBS = np.abs(R.standard_normal((4, 5))) + .05
REDUCTIONS = ["none", "mean", "sum"]


def F(lib):
    return lib.nn.functional


CASES = {
    "kl_div": lambda lib, r, a, b: F(lib).kl_div(a, b, reduction=r),
    "kl_div log_target": lambda lib, r, a, b: F(lib).kl_div(a, b.log(), reduction=r,
                                                           log_target=True),
    "margin_ranking": lambda lib, r, a, b: F(lib).margin_ranking_loss(
        a, b, lib.tensor(SIGNS).to(a.dtype), margin=0.3, reduction=r),
    "hinge_embedding": lambda lib, r, a, b: F(lib).hinge_embedding_loss(
        a, lib.tensor(SIGNS).to(a.dtype), margin=0.7, reduction=r),
    "soft_margin": lambda lib, r, a, b: F(lib).soft_margin_loss(a, lib.tensor(SIGNS).to(a.dtype),
                                                                reduction=r),
    "cosine_embedding": lambda lib, r, a, b: F(lib).cosine_embedding_loss(
        a, b, lib.tensor(ROW_SIGNS).to(a.dtype), margin=-0.2, reduction=r),
    "gaussian_nll": lambda lib, r, a, b: F(lib).gaussian_nll_loss(a, lib.tensor(Y).to(a.dtype), b,
                                                                  reduction=r),
    "gaussian_nll full, row variance": lambda lib, r, a, b: F(lib).gaussian_nll_loss(
        a, lib.tensor(Y).to(a.dtype), b[:, 0], full=True, reduction=r),
    "poisson_nll": lambda lib, r, a, b: F(lib).poisson_nll_loss(a, b, reduction=r),
    "poisson_nll rates, full": lambda lib, r, a, b: F(lib).poisson_nll_loss(
        b, a.abs() * 3, log_input=False, full=True, reduction=r),
    "triplet_margin": lambda lib, r, a, b: F(lib).triplet_margin_loss(a, b, a * b, margin=2.0,
                                                                      reduction=r),
    "triplet_margin swap p=1": lambda lib, r, a, b: F(lib).triplet_margin_loss(
        a, b, b * 0.5, margin=1.5, p=1, swap=True, reduction=r),
    "multilabel_soft_margin": lambda lib, r, a, b: F(lib).multilabel_soft_margin_loss(
        a, (b > 0.5).to(a.dtype), reduction=r),
    "multilabel_soft_margin weight": lambda lib, r, a, b: F(lib).multilabel_soft_margin_loss(
        a, (b > 0.5).to(a.dtype), weight=b, reduction=r),
    "multi_margin": lambda lib, r, a, b: F(lib).multi_margin_loss(
        a, lib.tensor([0, 4, 2, 2]), reduction=r),
    "multi_margin p=2 weight": lambda lib, r, a, b: F(lib).multi_margin_loss(
        a, lib.tensor([1, 3, 0, 2]), p=2, margin=0.5, weight=b[0].detach(), reduction=r),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_loss_against_torch(case, reduction):
    fn = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, a, b: fn(lib, reduction, a, b), X, PROBS)
        compare(lambda lib, a, b: fn(lib, reduction, a, b), X.astype(np.float32),
                PROBS.astype(np.float32))


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("multi_margin")], ids=str)
def test_loss_double_backward(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        double_backward(lambda lib, a, b: CASES[case](lib, "sum", a, b), X, PROBS)


@pytest.mark.parametrize("case", ["kl_div", "soft_margin", "poisson_nll", "cosine_embedding"])
def test_loss_gradcheck(case):
    a = hookgrad.tensor(X.copy(), requires_grad=True)
    b = hookgrad.tensor(PROBS.copy(), requires_grad=True)
    signs = ROW_SIGNS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case == "cosine_embedding":
            fn = lambda a, b: hookgrad.nn.functional.cosine_embedding_loss(  # noqa: E731
                a, b, hookgrad.tensor(signs), reduction="none")
        else:
            fn = lambda a, b: CASES[case](hookgrad, "mean", a, b)  # noqa: E731
        assert hookgrad.autograd.gradcheck(fn, (a, b))


def test_kl_div_batchmean_and_its_warning():
    compare(lambda lib, a, b: F(lib).kl_div(a, b, reduction="batchmean"), LOG_P, PROBS)
    compare(lambda lib, a, b: F(lib).kl_div(a, b, reduction="batchmean", log_target=True),
            LOG_P, LOG_P[::-1].copy())
    compare(lambda lib, a, b: F(lib).kl_div(a, b, reduction="batchmean"), LOG_P[0, 0], PROBS[0, 0])
    target = PROBS.copy()
    target[0, :2] = 0  # xlogy: a zero target contributes nothing
    compare(lambda lib, a, b: F(lib).kl_div(a, b, reduction="sum"), LOG_P, target)
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            F(lib).kl_div(lib.tensor(LOG_P), lib.tensor(PROBS))
    assert_same_error(lambda lib: F(lib).kl_div(lib.tensor(LOG_P), lib.tensor(PROBS),
                                                reduction="avg"))


def test_kl_div_legacy_arguments():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, a, b: F(lib).kl_div(a, b, size_average=False), LOG_P, PROBS)
        compare(lambda lib, a, b: F(lib).kl_div(a, b, reduce=False), LOG_P, PROBS)


def test_cosine_embedding_on_one_pair_of_vectors():
    compare(lambda lib, a, b: F(lib).cosine_embedding_loss(a, b, lib.tensor(-1.0), margin=0.1),
            X[0], Y[0])
    compare(lambda lib, a, b: F(lib).cosine_embedding_loss(a, b, lib.tensor(1)), X[0], Y[0])


def test_soft_margin_answers_in_the_input_dtype():
    compare(lambda lib, a: F(lib).soft_margin_loss(a, lib.tensor(SIGNS)), X.astype(np.float32))


def test_multi_margin_on_one_sample():
    compare(lambda lib, a: F(lib).multi_margin_loss(a, lib.tensor([2]), reduction="none"), X[0])
    compare(lambda lib, a: F(lib).multi_margin_loss(a, lib.tensor(3), reduction="none"), X[0])


ERRORS = {
    "margin_ranking dims": lambda lib: F(lib).margin_ranking_loss(
        lib.tensor(X), lib.tensor(X[0]), lib.tensor(X)),
    "cosine_embedding 2-D target": lambda lib: F(lib).cosine_embedding_loss(
        lib.tensor(X), lib.tensor(X), lib.tensor(X)),
    "cosine_embedding input dims": lambda lib: F(lib).cosine_embedding_loss(
        lib.tensor(X), lib.tensor(X), lib.tensor(1.0)),
    "gaussian_nll negative var": lambda lib: F(lib).gaussian_nll_loss(
        lib.tensor(X), lib.tensor(X), lib.tensor(-PROBS)),
    "gaussian_nll var size": lambda lib: F(lib).gaussian_nll_loss(
        lib.tensor(X), lib.tensor(X), lib.tensor(PROBS[:2, :2])),
    "gaussian_nll reduction": lambda lib: F(lib).gaussian_nll_loss(
        lib.tensor(X), lib.tensor(X), lib.tensor(PROBS), reduction="avg"),
    "triplet margin": lambda lib: F(lib).triplet_margin_loss(
        lib.tensor(X), lib.tensor(X), lib.tensor(X), margin=0.0),
    "triplet dims": lambda lib: F(lib).triplet_margin_loss(
        lib.tensor(X), lib.tensor(X[0]), lib.tensor(X)),
    "multi_margin p": lambda lib: F(lib).multi_margin_loss(lib.tensor(X), lib.tensor([0] * 4),
                                                           p=3),
    "multi_margin weight dims": lambda lib: F(lib).multi_margin_loss(
        lib.tensor(X), lib.tensor([0] * 4), weight=lib.tensor(X)),
    "multi_margin target size": lambda lib: F(lib).multi_margin_loss(lib.tensor(X),
                                                                     lib.tensor([0] * 3)),
    "multi_margin 2-D target": lambda lib: F(lib).multi_margin_loss(lib.tensor(X),
                                                                    lib.tensor([[0]] * 4)),
    "multi_margin 3-D input": lambda lib: F(lib).multi_margin_loss(lib.tensor([X]),
                                                                   lib.tensor([0])),
    "multi_margin target range": lambda lib: F(lib).multi_margin_loss(lib.tensor(X),
                                                                      lib.tensor([0, 1, 2, 7])),
    "multi_margin weight requires grad": lambda lib: F(lib).multi_margin_loss(
        lib.tensor(X), lib.tensor([0] * 4), weight=lib.tensor(X[0], requires_grad=True)),
    "multi_margin weight size": lambda lib: F(lib).multi_margin_loss(
        lib.tensor(X), lib.tensor([0] * 4), weight=lib.tensor(X[0, :4])),
    "poisson reduction": lambda lib: F(lib).poisson_nll_loss(lib.tensor(X), lib.tensor(X),
                                                             reduction="avg"),
    "multilabel reduction": lambda lib: F(lib).multilabel_soft_margin_loss(
        lib.tensor(X), lib.tensor(X), reduction="avg"),
    "soft_margin reduction": lambda lib: F(lib).soft_margin_loss(lib.tensor(X), lib.tensor(X),
                                                                 reduction="avg"),
}


@pytest.mark.parametrize("case", ERRORS, ids=str)
def test_loss_errors(case):
    assert_same_error(ERRORS[case])


# -- modules ------------------------------------------------------------------------------------
MODULES = {
    "KLDivLoss": (lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True), 2),
    "MarginRankingLoss": (lambda nn: nn.MarginRankingLoss(margin=0.2, reduction="sum"), 3),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(margin=2.0), "signs"),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(reduction="none"), "signs"),
    "CosineEmbeddingLoss": (lambda nn: nn.CosineEmbeddingLoss(margin=0.1), "rows"),
    "GaussianNLLLoss": (lambda nn: nn.GaussianNLLLoss(full=True, eps=1e-3), "var"),
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(log_input=False, eps=1e-4), "rates"),
    "TripletMarginLoss": (lambda nn: nn.TripletMarginLoss(margin=0.5, p=3, swap=True), 3),
    "MultiLabelSoftMarginLoss": (lambda nn: nn.MultiLabelSoftMarginLoss(), "labels"),
    "MultiMarginLoss": (lambda nn: nn.MultiMarginLoss(p=2, margin=0.8), "classes"),
}


def _run_module(lib, name, a, b):
    build, kind = MODULES[name]
    module = build(lib.nn)
    if kind == 2:
        return module(a, b)
    if kind == 3:
        return module(a, b, a - b)
    if kind == "signs":
        return module(a, lib.tensor(SIGNS).to(a.dtype))
    if kind == "rows":
        return module(a, b, lib.tensor(ROW_SIGNS).to(a.dtype))
    if kind == "var":
        return module(a, b, b.abs())
    if kind == "rates":
        return module(b.abs(), a.abs())
    if kind == "labels":
        return module(a, (b > 0).to(lib.float64))
    return module(a, lib.tensor([0, 4, 2, 2]))


@pytest.mark.parametrize("name", MODULES)
def test_loss_module(name):
    compare(lambda lib, a, b: _run_module(lib, name, a, b), X, Y)
    module, theirs = MODULES[name][0](hookgrad.nn), MODULES[name][0](torch.nn)
    assert repr(module) == repr(theirs)
    assert list(module.state_dict()) == list(theirs.state_dict())
    for key, value in vars(theirs).items():
        if not key.startswith("_"):
            assert getattr(module, key) == value, key


def test_loss_module_weights_are_buffers():
    weight = R.random(5)
    for lib in (torch, hookgrad):
        module = lib.nn.MultiMarginLoss(weight=lib.tensor(weight))
        assert list(dict(module.named_buffers())) == ["weight"]
    compare(lambda lib, a, w: lib.nn.MultiLabelSoftMarginLoss(weight=w)(
        a, lib.tensor((Y > 0) * 1.0)), X, weight)
    assert_same_error(lambda lib: lib.nn.MultiMarginLoss(p=3))
    assert_same_error(lambda lib: lib.nn.TripletMarginLoss(margin=-1.0))


MULTILABEL_TARGETS = np.array([[3, 0, -1, 1, 2], [0, 1, 2, 3, 4], [-1, 1, 1, 1, 0],
                               [1, 1, -1, 0, 4]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction):
    compare(lambda lib, a: F(lib).multilabel_margin_loss(a, lib.tensor(MULTILABEL_TARGETS),
                                                         reduction=reduction), X)
    compare(lambda lib, a: lib.nn.MultiLabelMarginLoss(reduction=reduction)(
        a, lib.tensor(MULTILABEL_TARGETS)), X.astype(np.float32))
    compare(lambda lib, a: F(lib).multilabel_margin_loss(a, lib.tensor(MULTILABEL_TARGETS[0]),
                                                         reduction=reduction), X[0])
    a = hookgrad.tensor(X.copy(), requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: hookgrad.nn.functional.multilabel_margin_loss(
        t, hookgrad.tensor(MULTILABEL_TARGETS)), (a,))


def test_multilabel_margin_loss_errors():
    targets = MULTILABEL_TARGETS
    for make in (lambda lib: F(lib).multilabel_margin_loss(lib.tensor(X),
                                                           lib.tensor(targets[:, :3])),
                 lambda lib: F(lib).multilabel_margin_loss(lib.tensor(X),
                                                           lib.tensor(targets).float()),
                 lambda lib: F(lib).multilabel_margin_loss(lib.tensor(X),
                                                           lib.tensor(targets) + 5),
                 lambda lib: F(lib).multilabel_margin_loss(lib.tensor(X)[None],
                                                           lib.tensor(targets)[None]),
                 lambda lib: F(lib).multilabel_margin_loss(lib.tensor(X), lib.tensor(targets),
                                                           reduction="avg")):
        assert_same_error(make)
    assert repr(hookgrad.nn.MultiLabelMarginLoss()) == repr(torch.nn.MultiLabelMarginLoss())
