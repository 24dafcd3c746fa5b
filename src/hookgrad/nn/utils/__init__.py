"""Utilities over a model's parameters: gradient clipping, flattening to a vector."""
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters"]

# recurrent-layer helpers (torch.nn.utils.rnn)
from . import rnn  # noqa: E402
from .rnn import PackedSequence  # noqa: E402

__all__ += ["rnn", "PackedSequence"]

# parametrizations (torch.nn.utils.parametrize)
from . import parametrize  # noqa: E402

__all__ += ["parametrize"]
from . import parametrizations  # noqa: E402

__all__ += ["parametrizations"]

# the older hook-based normalizations (torch.nn.utils.weight_norm / spectral_norm)
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402

__all__ += ["remove_spectral_norm", "spectral_norm", "remove_weight_norm", "weight_norm"]

# functional_call's old name, skip_init, batch-norm fusion, conv weight layouts
from . import fusion, stateless  # noqa: E402
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: E402
                     fuse_linear_bn_weights)
from .init import skip_init  # noqa: E402
from .memory_format import (convert_conv2d_weight_memory_format,  # noqa: E402
                            convert_conv3d_weight_memory_format)

__all__ += ["fusion", "stateless", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
            "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init",
            "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
