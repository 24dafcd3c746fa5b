"""What of torch's API hookgrad has, in one list: the README's "Supported / not supported" table
is generated from it (``python -m hookgrad._support --write README.md``) and a test checks that
the table is current and that every name listed as supported exists.

Each row: an area, the torch names it covers (as ``hookgrad.<name>`` paths), whether hookgrad has
them, and a note on what differs from torch.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path
from typing import List, NamedTuple, Sequence

BEGIN, END = "<!-- support-table:begin -->", "<!-- support-table:end -->"


class Row(NamedTuple):
    area: str
    names: Sequence[str]
    supported: bool
    note: str = ""


ROWS: List[Row] = [
    Row("Tensors", ("tensor", "from_numpy", "Tensor.view", "Tensor.expand", "Tensor.contiguous",
                    "Tensor.stride", "Tensor.is_contiguous"), True,
        "float16/32/64, int8-64, uint8, bool; views share memory and a version counter; every "
        "result has torch's strides (elementwise ones follow their inputs' layout)"),
    Row("Tensors", ("memory_format", "channels_last", "channels_last_3d", "contiguous_format",
                    "preserve_format"), True,
        "contiguous, is_contiguous, clone, to, empty, empty_like, zeros_like, ones_like, "
        "full_like, rand_like, randn_like and nn.Module.to "
        "take memory_format and give torch's strides (size-1 dims too); ops on channels-last "
        "inputs keep torch's layout"),
    Row("Tensors", ("bfloat16", "Tensor.bfloat16", "nn.Module.bfloat16"), True,
        "through ml_dtypes (extra hookgrad[bfloat16]); computed in float32 and rounded once"),
    Row("Tensors", ("finfo", "iinfo"), True, "same attributes, values and repr as torch's"),
    Row("Tensors", ("UntypedStorage", "TypedStorage", "FloatStorage", "LongStorage", "is_storage",
                    "Tensor.untyped_storage", "Tensor.storage", "Tensor.storage_type",
                    "Tensor.set_", "Tensor.is_set_to", "Tensor._is_view"), True,
        "byte and typed windows on a tensor's memory (never copies), the legacy classes; "
        "set_ never grows a storage (torch does) and hookgrad.save does not write bare "
        "storages"),
    Row("Tensors", ("asarray", "empty_strided", "logspace", "is_complex", "is_nonzero",
                    "Tensor.is_signed", "Tensor.is_same_size", "Tensor.byte", "Tensor.char",
                    "Tensor.split_with_sizes"), True,
        "asarray shares memory as torch's does (copy=False refuses a conversion)"),
    Row("Tensors", ("complex64", "sparse_coo_tensor"), False,
        "no complex or sparse dtypes yet"),
    Row("Autograd", ("autograd.grad", "autograd.backward", "autograd.Function",
                     "autograd.gradcheck", "autograd.gradgradcheck", "autograd.functional.vjp",
                     "autograd.functional.jvp", "autograd.functional.jacobian",
                     "autograd.functional.hessian", "autograd.functional.hvp",
                     "autograd.functional.vhp"), True,
        "double backward everywhere; jvp by the double-vjp trick (reverse mode)"),
    Row("Autograd", ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                     "is_inference_mode_enabled", "is_inference", "Tensor.is_inference"), True,
        "context managers and decorators (generators too); tensors made in inference_mode are "
        "inference tensors, refused as torch refuses them outside it (saved for backward, "
        "changed in place, set to require grad); inside inference_mode nothing is recorded "
        "even where enable_grad turns grad mode on"),
    Row("Hooks", ("autograd.graph.saved_tensors_hooks", "autograd.graph.save_on_cpu",
                  "autograd.graph.register_multi_grad_hook", "Tensor.register_hook",
                  "Tensor.register_post_accumulate_grad_hook", "nn.Module.register_forward_hook",
                  "nn.Module.register_full_backward_hook",
                  "nn.modules.module.register_module_forward_hook"), True,
        "torch's hook order, arguments and return-value rules"),
    Row("torch.func", ("func.grad", "func.grad_and_value", "func.vjp", "func.jvp", "func.jacrev",
                       "func.jacfwd", "func.hessian", "func.functional_call", "func.vmap"), True,
        "on the reverse-mode engine; vmap loops over the batch (same results, slower)"),
    Row("torch.func", ("func.linearize", "func.functionalize", "func.stack_module_state",
                       "func.replace_all_batch_norm_modules_", "vmap"), True,
        "linearize's jvp_fn recomputes by the reverse-mode jvp at each call; functionalize "
        "runs eagerly (same outputs and input mutations as torch's)"),
    Row("Global settings", ("use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
                            "is_deterministic_algorithms_warn_only_enabled",
                            "get_deterministic_debug_mode", "set_deterministic_debug_mode",
                            "get_float32_matmul_precision", "set_float32_matmul_precision",
                            "get_num_interop_threads", "set_num_interop_threads",
                            "init_num_threads", "set_warn_always", "is_warn_always_enabled",
                            "set_flush_denormal"), True,
        "torch's values, defaults and argument errors; every op is deterministic and float32 "
        "products stay float32 whatever is set; in deterministic mode empty and its kin fill "
        "NaN / the largest value as torch's do (utils.deterministic.fill_uninitialized_memory); "
        "set_warn_always repeats once-only warnings; set_flush_denormal sets the x86-64 "
        "FTZ/DAZ bits of the calling thread"),
    Row("Autograd", ("is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
                     "autograd.detect_anomaly", "autograd.set_detect_anomaly",
                     "autograd.set_multithreading_enabled", "autograd.is_multithreading_enabled",
                     "autograd.is_view_replay_enabled", "autograd.variable"), True,
        "anomaly mode refuses NaN gradients with torch's error but records no forward "
        "traceback; backward always runs on the calling thread (those flags are only kept)"),
    Row("Utilities", ("typename", "get_device", "is_storage", "is_distributed", "compile",
                      "cond", "while_loop"), True,
        "compile runs the function or module eagerly (a module comes back as an "
        "OptimizedModule around it); cond and while_loop run eagerly with torch's checks on "
        "predicates, operands and branch/body outputs"),
    Row("Tensors", ("range", "empty_permuted", "frombuffer", "from_file", "from_dlpack",
                    "to_dlpack", "Tensor.__dlpack__", "as_strided_", "as_strided_scatter",
                    "Tensor.as_strided_scatter", "resize_as_", "slice_inverse", "histogramdd",
                    "segment_reduce"), True,
        "DLPack both ways with NumPy and torch; as_strided_scatter's input gradient is torch "
        "2.13's (kept inside the written region, zero outside); segment_reduce's gradient has "
        "no gradient, as in torch"),
    Row("Random numbers", ("manual_seed", "Generator", "rand", "randn", "randint", "randperm",
                           "get_rng_state", "set_rng_state", "random.fork_rng"), True,
        "torch's CPU mt19937 streams bit for bit for the same seed and call sequence"),
    Row("Random numbers", ("_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet",
                           "_dirichlet_grad", "binomial", "poisson"), True,
        "torch's CPU samplers draw for draw (Marsaglia-Tsang gamma, BTRS/inversion binomial), "
        "the generator left where torch's is; the gamma and Dirichlet pathwise gradients"),
    Row("Devices", ("cuda.is_available", "device", "set_default_device",
                    "get_default_device"), True,
        "CPU only: CUDA requests raise torch's CPU-build errors"),
    Row("Layers", ("nn.Linear", "nn.Conv1d", "nn.Conv2d", "nn.Conv3d", "nn.ConvTranspose2d",
                   "nn.ConvTranspose3d", "nn.BatchNorm2d", "nn.LayerNorm", "nn.GroupNorm",
                   "nn.InstanceNorm2d", "nn.Embedding", "nn.EmbeddingBag", "nn.Bilinear",
                   "nn.Dropout", "nn.MaxPool2d", "nn.MaxPool3d", "nn.AvgPool2d",
                   "nn.AdaptiveAvgPool2d", "nn.Upsample", "nn.PixelShuffle", "nn.Unfold",
                   "nn.Fold", "nn.CosineSimilarity", "nn.PairwiseDistance", "nn.GLU",
                   "nn.AlphaDropout", "nn.FeatureAlphaDropout", "nn.Dropout3d"), True, ""),
    Row("Layers", ("nn.PReLU", "nn.Softmin", "nn.Threshold", "nn.RMSNorm", "nn.LocalResponseNorm",
                   "nn.BatchNorm3d", "nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d",
                   "nn.AdaptiveMaxPool3d", "nn.ZeroPad2d", "nn.ConstantPad2d",
                   "nn.ReflectionPad2d", "nn.ReplicationPad2d", "nn.CircularPad2d",
                   "nn.MaxUnpool2d", "nn.LPPool2d", "nn.ChannelShuffle", "nn.Softmax2d"), True,
        "padding layers in 1-3 dims over F.pad; rms_norm, local_response_norm and lp_pool "
        "composed as torch composes them"),
    Row("Layers", ("nn.CrossMapLRN2d",), True,
        "torch's legacy kernel reproduced: its channel windows (channel 0 always in the sum) "
        "and its hand-written gradient, which is not the exact derivative; size 1 and double "
        "backward raise as torch"),
    Row("Layers", ("nn.RReLU", "nn.functional.rrelu", "nn.functional.rrelu_", "rrelu"), True,
        "training slopes are torch's draws from the default generator (equal for equal seeds), "
        "evaluation uses the mean slope"),
    Row("Layers", ("nn.FractionalMaxPool2d", "nn.FractionalMaxPool3d",
                   "nn.functional.fractional_max_pool2d",
                   "nn.functional.fractional_max_pool3d",
                   "nn.functional.fractional_max_pool2d_with_indices",
                   "nn.functional.fractional_max_pool3d_with_indices",
                   "nn.functional.gumbel_softmax"), True,
        "the samples are torch's draws from the default generator (equal for equal seeds), "
        "window starts worked in the input's dtype as torch's kernel; gumbel_softmax's noise "
        "likewise, its result equal to torch's up to the last bit of log and softmax"),
    Row("Layers", ("nn.AdaptiveLogSoftmaxWithLoss",), True,
        "torch's submodules and parameter names (state dicts load either way) and its "
        "initial draws for the same seed; log_prob and predict"),
    Row("Layers", ("nn.LinearCrossEntropyLoss", "nn.functional.linear_cross_entropy",
                   "nn.SyncBatchNorm", "nn.DataParallel", "nn.parallel.DataParallel",
                   "nn.Container", "nn.NLLLoss2d"), True,
        "linear_cross_entropy takes torch's reference path (``options`` is accepted and has no "
        "effect); SyncBatchNorm and DataParallel behave as torch's do in one CPU process "
        "(plain batch norm; the wrapped module on the whole batch); Container and NLLLoss2d "
        "warn as deprecated, as torch's"),
    Row("Layers", ("nn.grad.conv1d_input", "nn.grad.conv2d_input", "nn.grad.conv3d_input",
                   "nn.grad.conv1d_weight", "nn.grad.conv2d_weight", "nn.grad.conv3d_weight",
                   "nn.functional.native_channel_shuffle", "conv_tbc",
                   "nn.functional.conv_tbc"), True,
        "nn.grad runs the convolution's own backward on a stand-in, so it is differentiable "
        "again with torch's ConvolutionBackwardBackward0 node; conv_tbc records "
        "ConvTbcBackward0 with torch's saved attributes"),
    Row("Layers", ("nn.LinearCrossEntropyOptions",), False,
        "not yet"),
    Row("Losses", ("nn.MSELoss", "nn.CrossEntropyLoss", "nn.NLLLoss", "nn.BCEWithLogitsLoss",
                   "nn.KLDivLoss", "nn.MarginRankingLoss", "nn.HingeEmbeddingLoss",
                   "nn.SoftMarginLoss", "nn.CosineEmbeddingLoss", "nn.GaussianNLLLoss",
                   "nn.PoissonNLLLoss", "nn.TripletMarginLoss", "nn.MultiLabelSoftMarginLoss",
                   "nn.MultiMarginLoss", "nn.TripletMarginWithDistanceLoss",
                   "nn.MultiLabelMarginLoss"), True,
        "soft, multi and multilabel margin losses record torch's fused nodes "
        "(`SoftMarginLossBackward0`, ...) with its saved attributes; soft margin's gradient is "
        "differentiable again, the other two's double backward raises torch's error"),
    Row("CTC loss", ("nn.CTCLoss", "nn.functional.ctc_loss", "ctc_loss"), True,
        "padded or concatenated targets, unbatched input, every reduction and zero_infinity; "
        "torch's gradient (the logits' once composed with log_softmax) and CtcLossBackward0 "
        "node; differentiating the gradient raises, as torch's does"),
    Row("Tensor methods", ("Tensor.addmm", "Tensor.baddbmm_", "Tensor.bitwise_and",
                           "Tensor.greater_equal", "Tensor.eq_", "Tensor.logical_and_",
                           "Tensor.remainder_", "Tensor.cumsum_", "Tensor.t_",
                           "Tensor.unsqueeze_", "Tensor.as_strided_"), True,
        "every torch.Tensor method whose torch function hookgrad has, in-place forms with "
        "torch's node names"),
    Row("Math", ("tensordot", "inner", "vdot", "erfc", "logaddexp2", "float_power", "ldexp",
                 "frexp", "nextafter", "heaviside", "gcd", "lcm", "isposinf", "isneginf", "signbit",
                 "lgamma", "digamma", "polygamma", "mvlgamma"), True,
        "erfc keeps full relative accuracy in the tail (a continued fraction beyond 2); the "
        "gamma family in NumPy alone (recurrence, Stirling series, reflection); every "
        "function's out= is honoured (a copy into out, resized as torch resizes it)"),
    Row("nn ops under torch.*", ("prelu", "pixel_shuffle", "kl_div", "instance_norm", "rms_norm",
                                 "max_pool1d", "adaptive_max_pool1d", "constant_pad_nd",
                                 "triplet_margin_loss", "native_channel_shuffle"), True,
        "ATen's positional argument order; the reduction as its enum (1 mean, 2 sum, anything "
        "else none, and none by default, as torch's bindings behave)"),
    Row("nn ops under torch.*", ("native_batch_norm", "native_layer_norm", "native_group_norm",
                                 "batch_norm_update_stats"), True,
        "the statistics beside the result, in torch's shapes: batch norm's (mean, invstd) per "
        "channel (empty in evaluation), layer norm's (mean, rstd) with size-1 normalized dims, "
        "group norm's (N, groups); batch_norm_update_stats returns (mean, biased var) and its "
        "results carry no gradient (torch's raise on backward)"),
    Row("nn ops under torch.*", ("native_norm", "batch_norm_stats", "batch_norm_elemt",
                                 "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
                                 "batch_norm_backward_reduce", "batch_norm_backward_elemt"), True,
        "present, and raise NotImplementedError as torch 2.13 does on a dense CPU tensor (its "
        "kernels are sparse-only and CUDA-only)"),
    Row("nn ops under torch.*", ("grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
                                 "affine_grid_generator", "embedding_bag", "embedding_renorm_"),
        True,
        "grid samplers take torch's integer codes (0 bilinear/zeros, 1 nearest/border, 2 "
        "bicubic/reflection); embedding_bag returns torch's four results (output, offset2bag, "
        "bag_size, max_indices) as its CPU kernel fills them; its graph is made of ordinary ops"),
    Row("Dropout under torch.*", ("dropout", "dropout_", "feature_dropout", "feature_dropout_",
                                  "alpha_dropout_", "feature_alpha_dropout_", "native_dropout"),
        True,
        "masks equal torch's for the same seed; native_dropout returns the bool mask and, like "
        "torch, does not scale the gradient when train is None"),
    Row("Complex API on real tensors", ("conj", "resolve_conj", "resolve_neg", "is_conj", "real",
                                        "angle", "adjoint", "isreal", "Tensor.imag"), True,
        "the input itself, a view or a constant, as torch gives for real dtypes; imag raises"),
    Row("More functions and methods", ("hann_window", "hamming_window", "blackman_window",
                                       "bartlett_window", "kaiser_window", "bitwise_left_shift",
                                       "bitwise_right_shift", "Tensor.__lshift__",
                                       "split_with_sizes", "unsafe_split", "unsafe_chunk", "fill",
                                       "scalar_tensor", "Tensor.new", "put", "Tensor.put_",
                                       "histogram", "combinations", "gradient",
                                       "nonzero_static", "Tensor.resize_", "Tensor.dim_order",
                                       "Tensor.apply_", "Tensor.map_", "Tensor.share_memory_"),
        True,
        "shift counts outside the type's width give torch's results; float16/bfloat16 windows "
        "are computed in float32 and rounded once; resize_ keeps its buffer as torch's storage "
        "does; pin_memory is refused as on a CPU-only torch"),
    Row("Shape and indexing", ("fliplr", "flipud", "hsplit", "vsplit", "dsplit", "tril_indices",
                               "triu_indices", "unravel_index", "vander", "select_scatter",
                               "slice_scatter", "diagonal_scatter", "index_copy",
                               "scatter_reduce", "index_reduce", "Tensor.index_reduce_"),
        True,
        "vander and scatter_reduce with a src larger than the index are differentiable here "
        "(torch's backward raises)"),
    Row("View copies", ("alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy",
                        "expand_copy", "narrow_copy", "permute_copy", "select_copy",
                        "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy",
                        "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
                        "unsqueeze_copy", "view_copy", "Tensor.narrow_copy"), True,
        "each view op's result as a fresh row-major tensor, with the view's checks, saved "
        "arguments and gradient under torch's <node>_copy name; out= as torch's *_copy.out "
        "(exact dtype; an input that requires grad leaves out with a node that refuses "
        "backward); view_copy accepts any layout"),
    Row("View copies", ("view_as_complex_copy", "view_as_real_copy", "indices_copy",
                        "values_copy", "crow_indices_copy", "col_indices_copy",
                        "ccol_indices_copy", "row_indices_copy"), False,
        "no complex or sparse tensors"),
    Row("torch.special", ("special.expit", "special.logit", "special.erf", "special.erfc",
                          "special.ndtr", "special.gammaln", "special.digamma", "special.psi",
                          "special.polygamma", "special.multigammaln", "special.xlogy",
                          "special.log_softmax", "special.softmax", "special.logsumexp",
                          "special.erfinv", "special.i0", "special.i1",
                          "special.i0e", "special.i1e", "special.entr", "special.erfcx",
                          "special.log_ndtr", "special.ndtri", "special.xlog1py",
                          "special.spherical_bessel_j0", "special.modified_bessel_i0",
                          "special.modified_bessel_i1", "special.modified_bessel_k0",
                          "special.modified_bessel_k1", "special.scaled_modified_bessel_k0",
                          "special.scaled_modified_bessel_k1", "special.zeta"), True,
        "the functions hookgrad computes"),
    Row("torch.special", ("special.bessel_j0", "special.bessel_j1", "special.bessel_y0",
                          "special.bessel_y1", "special.airy_ai"), True,
        "the Cephes rational approximations evaluated as torch's kernels do, in the input's "
        "float type (float32 rounds like torch's); no gradient, as torch; half types refused"),
    Row("Orthogonal polynomials", tuple("special." + name for name in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
        "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
        "laguerre_polynomial_l", "legendre_polynomial_p")), True,
        "three-term recurrences over all elements at once (trigonometric forms for high "
        "Chebyshev degrees, as torch); no gradient, as torch; NaN at NaN x where torch's "
        "kernels return an arbitrary value"),
    Row("Incomplete gamma", ("igamma", "igammac", "special.gammainc", "special.gammaincc",
                             "Tensor.igamma", "Tensor.igammac", "Tensor.igamma_",
                             "Tensor.igammac_"), True,
        "series below x = a + 1, continued fraction above, an asymptotic expansion beyond "
        "a = 1e7, in float64 with NumPy only; differentiable in x only, as torch"),
    Row("Fused products and norms", ("addmv", "addr", "addbmm", "dist", "renorm", "erfinv", "i0",
                                     "Tensor.addmv_", "Tensor.addr_", "Tensor.addbmm_",
                                     "Tensor.renorm_", "Tensor.erfinv_", "Tensor.i0_",
                                     "Tensor.unfold"), True,
        "erfinv refines a closed-form estimate by Halley steps on erf (erfc near +-1), within "
        "1e-13 of torch in float64; dist and renorm share vector_norm's gradient; unfold is a view "
        "whose backward adds overlapping windows back"),
    Row("Determinants", ("det", "logdet", "slogdet", "inverse", "linalg.det", "linalg.slogdet",
                         "linalg.inv", "linalg.LinAlgError", "Tensor.det", "Tensor.inverse"),
        True, "an LU with partial pivoting on NumPy, so the nodes save torch's A, LU, pivots and "
        "result; a singular matrix's det gradient is the adjugate (first order only)"),
    Row("Matrix norms and products", (
        "linalg.norm", "linalg.matrix_norm", "linalg.vecdot", "linalg.multi_dot",
        "linalg.matrix_power", "linalg.diagonal", "linalg.cond", "linalg.matrix_rank",
        "linalg.vander", "linalg.tensorinv", "linalg.tensorsolve", "norm", "nuclear_norm",
        "frobenius_norm", "chain_matmul", "matrix_power", "Tensor.matrix_power"), True,
        "composed as torch composes them, so the graphs carry torch's nodes (a nuclear norm is a "
        "sum over LinalgSvdBackward0; norm takes 'nuc'); multi_dot multiplies in the cheapest "
        "order"),
    Row("Linear systems", (
        "linalg.solve", "linalg.solve_ex", "linalg.solve_triangular", "linalg.inv_ex",
        "linalg.cholesky", "linalg.cholesky_ex", "linalg.lu_factor", "linalg.lu_factor_ex",
        "linalg.lu", "linalg.lu_solve", "cholesky", "cholesky_solve", "cholesky_inverse",
        "triangular_solve", "lu", "lu_unpack", "lu_solve", "Tensor.cholesky",
        "Tensor.cholesky_solve", "Tensor.triangular_solve", "Tensor.lu", "Tensor.lu_solve"), True,
        "LAPACK through NumPy where it succeeds; singular or non-positive-definite input is "
        "refactored on NumPy for torch's info codes and linalg.LinAlgError messages; LU of any "
        "m x n matrix with LAPACK's pivots; results laid out column-major as torch's"),
    Row("Linear systems", ("linalg.ldl_factor", "linalg.ldl_factor_ex", "linalg.ldl_solve"),
        True,
        "Bunch-Kaufman LDL^T on NumPy, one column at a time as LAPACK's sytf2 (lower), so LD, "
        "pivots and info are sytrf's; ldl_solve follows sytrs and broadcasts batches; no "
        "derivative, as torch; hermitian has no effect (no complex tensors)"),
    Row("Decompositions", (
        "linalg.svd", "linalg.svdvals", "linalg.eigh", "linalg.eigvalsh", "linalg.qr",
        "linalg.pinv", "linalg.lstsq", "linalg.matrix_exp", "linalg.householder_product", "svd",
        "qr", "pinverse", "matrix_exp", "geqrf", "orgqr", "ormqr", "Tensor.svd", "Tensor.qr",
        "Tensor.pinverse", "Tensor.matrix_exp"), True,
        "torch's gradient formulas (inf/NaN for repeated singular values or eigenvalues, as "
        "torch's); singular vectors' signs may differ from torch's LAPACK build, gauge-invariant "
        "results agree; lstsq fills residuals, rank and singular values per CPU driver as torch"),
    Row("Decompositions", ("linalg.eig", "linalg.eigvals"), False,
        "eig and eigvals give complex results (no complex dtypes yet)"),
    Row("Statistics", ("cov", "corrcoef", "trapezoid", "trapz", "cumulative_trapezoid", "histc",
                       "quantile", "nanquantile"), True, "every quantile interpolation mode"),
    Row("Distributions", ("distributions.Normal", "distributions.Uniform",
                          "distributions.Bernoulli", "distributions.Categorical",
                          "distributions.OneHotCategorical", "distributions.Exponential",
                          "distributions.Laplace", "distributions.Cauchy",
                          "distributions.LogNormal", "distributions.Gumbel",
                          "distributions.HalfNormal", "distributions.Geometric",
                          "distributions.Poisson", "distributions.MultivariateNormal",
                          "distributions.Independent", "distributions.TransformedDistribution",
                          "distributions.RelaxedBernoulli",
                          "distributions.RelaxedOneHotCategorical",
                          "distributions.MixtureSameFamily", "distributions.Multinomial"),
        True, "seeded sample/rsample equal to torch's draws (the same primitive calls); "
        "log_prob, cdf, icdf, entropy, moments, expand, validation messages and repr as torch's"),
    Row("Distributions", ("distributions.Gamma", "distributions.Chi2", "distributions.Beta",
                          "distributions.Dirichlet", "distributions.StudentT",
                          "distributions.Binomial"), True,
        "seeded sample/rsample equal to torch's draws (torch's gamma and binomial samplers, "
        "the same uniforms and cached normals), with torch's pathwise gradients; log_prob, cdf, "
        "entropy, moments and KL as torch's"),
    Row("Distributions", ("distributions.Pareto", "distributions.Weibull",
                          "distributions.HalfCauchy", "distributions.Kumaraswamy",
                          "distributions.LogisticNormal", "distributions.GeneralizedPareto",
                          "distributions.ContinuousBernoulli",
                          "distributions.LowRankMultivariateNormal", "distributions.VonMises"),
        True, "seeded draws equal to torch's (VonMises: its float64 Best-Fisher rejection "
        "loop); VonMises scores use the same Abramowitz-Stegun Bessel approximations as "
        "torch's; GeneralizedPareto's log_prob/cdf refuse float64 as torch's do"),
    Row("Distributions", ("distributions.InverseGamma", "distributions.FisherSnedecor",
                          "distributions.NegativeBinomial", "distributions.Wishart",
                          "distributions.LKJCholesky"), True,
        "scores, moments, entropy, expand and validation as torch's; draws go through the "
        "Gamma/Chi2/Beta samplers in torch's order (Wishart's redraw after its singular-"
        "sample screen included), so they need those samplers"),
    Row("Distributions", ("distributions.CorrCholeskyTransform",
                          "distributions.CumulativeDistributionTransform"), True,
        "corr_cholesky registered with biject_to and transform_to"),
    Row("Distributions", ("distributions.constraints", "distributions.transforms",
                          "distributions.biject_to", "distributions.transform_to",
                          "distributions.kl_divergence", "distributions.register_kl"), True,
        "KL for every same-family pair above and torch's cross pairs among them"),
    Row("Recurrent layers", ("nn.RNN", "nn.LSTM", "nn.GRU", "nn.RNNCell", "nn.LSTMCell",
                             "nn.GRUCell", "nn.utils.rnn.pack_padded_sequence",
                             "nn.utils.rnn.pad_packed_sequence", "nn.utils.rnn.pad_sequence"),
        True, "a Python loop over time steps, one input matmul per layer and direction"),
    Row("Recurrent layers", ("lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell",
                             "rnn_tanh_cell", "rnn_relu_cell"), True,
        "torch's flat-parameter and packed (data, batch_sizes) signatures; the same code as "
        "nn.LSTM/GRU/RNN, so the graph is made of ordinary ops"),
    Row("Parametrizations", ("nn.utils.parametrize.register_parametrization",
                             "nn.utils.parametrize.remove_parametrizations",
                             "nn.utils.parametrize.cached", "nn.utils.parametrize.is_parametrized",
                             "nn.utils.parametrize.type_before_parametrizations",
                             "nn.utils.parametrizations.orthogonal",
                             "nn.utils.parametrizations.spectral_norm",
                             "nn.utils.parametrizations.weight_norm"), True,
        "torch's Parametrized<Class> swap, state-dict keys (checkpoints load both ways), "
        "stacking, tuple right_inverse; spectral_norm's u, v from the same seed's draws"),
    Row("Weight and spectral norm hooks", ("nn.utils.weight_norm", "nn.utils.remove_weight_norm",
                                           "nn.utils.spectral_norm",
                                           "nn.utils.remove_spectral_norm", "_weight_norm",
                                           "norm_except_dim"), True,
        "the same forward pre-hooks, state-dict hooks and version metadata as torch; "
        "_weight_norm records WeightNormInterfaceBackward0"),
    Row("nn.utils, nn.init extras", ("nn.utils.fuse_conv_bn_eval", "nn.utils.fuse_linear_bn_eval",
                                     "nn.utils.skip_init", "nn.utils.stateless.functional_call",
                                     "nn.utils.convert_conv2d_weight_memory_format",
                                     "nn.init.dirac_", "nn.init.kaiming_normal"), True,
        "init's un-suffixed names warn as torch's do; skip_init builds the module and restores "
        "the generator (no meta device)"),
    Row("Attention", ("nn.MultiheadAttention", "nn.TransformerEncoderLayer",
                      "nn.TransformerDecoderLayer", "nn.Transformer",
                      "nn.functional.scaled_dot_product_attention"), True, ""),
    Row("Functional", ("nn.functional.interpolate", "nn.functional.grid_sample",
                       "nn.functional.affine_grid", "nn.functional.unfold",
                       "nn.functional.fold", "nn.functional.pixel_shuffle",
                       "nn.functional.normalize", "nn.functional.cosine_similarity", "cdist",
                       "pdist"), True,
        "interpolate without antialias"),
    Row("Containers", ("nn.Sequential", "nn.ModuleList", "nn.ModuleDict", "nn.ParameterList",
                       "nn.ParameterDict"), True, ""),
    Row("Containers", ("nn.Module.to_empty",), True,
        "fresh uninitialised storage for parameters, their gradients and buffers (recurse or "
        "not), parameters keeping their identity; only the CPU device exists, others raise as "
        "in a CPU build of torch"),
    Row("Lazy modules", ("nn.LazyLinear", "nn.LazyConv1d", "nn.LazyConv2d", "nn.LazyConv3d",
                         "nn.LazyConvTranspose2d", "nn.LazyBatchNorm2d", "nn.LazyInstanceNorm2d",
                         "nn.UninitializedParameter", "nn.UninitializedBuffer",
                         "nn.modules.lazy.LazyModuleMixin"), True,
        "shapes inferred by a forward pre-hook registered at construction, as torch's; a state "
        "dict loads into a lazy module without a dummy forward"),
    Row("Optimizers", ("optim.Muon",), True,
        "torch's Muon: Nesterov or plain momentum, Newton-Schulz orthogonalisation in bfloat16 "
        "(emulated on float32 with one rounding per operation, as torch's CPU kernels round), "
        "both learning-rate adjustments; trajectories equal torch's up to rare one-ulp "
        "bfloat16 roundings"),
    Row("Optimizers", ("optim.SGD", "optim.Adam", "optim.AdamW", "optim.RMSprop", "optim.Adagrad",
                       "optim.Adadelta", "optim.Adamax", "optim.NAdam", "optim.RAdam",
                       "optim.LBFGS", "optim.ASGD", "optim.Rprop", "optim.Adafactor"), True,
        "torch's single-tensor (for-loop) arithmetic; foreach/fused accepted and ignored"),
    Row("Weight averaging", ("optim.swa_utils.AveragedModel", "optim.swa_utils.SWALR",
                             "optim.swa_utils.update_bn", "optim.swa_utils.get_ema_multi_avg_fn",
                             "optim.swa_utils.get_swa_multi_avg_fn",
                             "optim.swa_utils.get_ema_avg_fn", "optim.swa_utils.get_swa_avg_fn"),
        True, "SWA and EMA averages as torch computes them on CPU; SWALR's lr curve value for "
        "value"),
    Row("LR schedulers", ("optim.lr_scheduler.StepLR", "optim.lr_scheduler.CosineAnnealingLR",
                          "optim.lr_scheduler.OneCycleLR", "optim.lr_scheduler.CyclicLR",
                          "optim.lr_scheduler.ReduceLROnPlateau",
                          "optim.lr_scheduler.SequentialLR", "optim.lr_scheduler.ChainedScheduler",
                          "optim.lr_scheduler.CosineAnnealingWarmRestarts",
                          "optim.lr_scheduler.PolynomialLR"), True,
        "the same lr (and momentum) curves as torch, value for value"),
    Row("Data", ("utils.data.DataLoader", "utils.data.TensorDataset", "utils.data.random_split"),
        True, "single process"),
    Row("Data", ("utils.data.ChainDataset", "utils.data.StackDataset",
                 "utils.data.DistributedSampler", "utils.data.distributed.DistributedSampler"),
        True,
        "DistributedSampler needs num_replicas and rank (no process group); its shuffled order "
        "is torch's for the same seed and epoch, with torch's padding and drop_last"),
    Row("Checkpoints", ("save", "load", "utils.safetensors.save_file",
                        "utils.safetensors.load_file"), True,
        "torch's zip (and legacy) format both ways; load never runs code from the file"),
    Row("Per-op interception", ("overrides.TorchFunctionMode",
                                "utils.flop_counter.FlopCounterMode"), True,
        "every hookgrad.*, nn.functional and Tensor method call; FLOPs of products and convs"),
    Row("Mixed precision", ("autocast", "amp.autocast", "amp.GradScaler", "amp.custom_fwd",
                            "amp.custom_bwd", "amp.is_autocast_available", "cpu.amp.autocast",
                            "cpu.amp.GradScaler", "is_autocast_enabled", "set_autocast_enabled",
                            "get_autocast_dtype", "set_autocast_dtype", "get_autocast_cpu_dtype",
                            "set_autocast_cpu_dtype", "is_autocast_cpu_enabled",
                            "set_autocast_cpu_enabled", "get_autocast_gpu_dtype",
                            "is_autocast_cache_enabled", "set_autocast_cache_enabled",
                            "clear_autocast_cache", "autocast_increment_nesting",
                            "autocast_decrement_nesting"), True,
        "CPU autocast in bfloat16 or float16 with torch 2.13's op lists, found by experiment "
        "(products and convolutions low, losses and linalg in float32, cat/stack/index_copy "
        "promote); thread-local; gradients reach float32 leaves in float32; CUDA warns and stays "
        "off; float32 leaves that require grad are cast once per autocast block (torch's cast "
        "cache). GradScaler on the CPU"),
    Row("Not there", ("fft", "distributed"), False,
        "no FFT or distributed training of hookgrad's own"),
]


def resolves(path: str) -> bool:
    """Whether ``hookgrad.<path>`` exists (importing submodules on the way)."""
    target = importlib.import_module("hookgrad")
    prefix = "hookgrad"
    for part in path.split("."):
        if hasattr(target, part):
            target = getattr(target, part)
            prefix += "." + part
            continue
        prefix += "." + part
        try:
            target = importlib.import_module(prefix)
        except ImportError:
            return False
    return True


def markdown_table(rows: Sequence[Row] = ROWS) -> str:
    lines = ["| area | torch API | in hookgrad | notes |", "|---|---|---|---|"]
    for row in rows:
        names = ", ".join(f"`{name}`" for name in row.names)
        lines.append(f"| {row.area} | {names} | {'yes' if row.supported else 'no'} | "
                     f"{row.note} |")
    return "\n".join(lines)


def replace_table(text: str) -> str:
    """``text`` with the block between the markers replaced by the current table."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"no {BEGIN} ... {END} block to replace")
    return pattern.sub(lambda _: f"{BEGIN}\n{markdown_table()}\n{END}", text)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description="print or write the supported-API table")
    parser.add_argument("--write", metavar="FILE", help="replace the table block in FILE")
    args = parser.parse_args(list(argv))
    if args.write:
        path = Path(args.write)
        path.write_text(replace_table(path.read_text()))
    else:
        print(markdown_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
