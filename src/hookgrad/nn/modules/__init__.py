"""Layers. Each family lives in its own file; this package lists them all."""
from .container import Flatten, Identity, ModuleDict, ModuleList, Sequential, Unflatten
from .module import Module
from .activation import (CELU, ELU, GELU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
                         LeakyReLU, RReLU, LogSigmoid, LogSoftmax, Mish, MultiheadAttention,
                         ReLU, ReLU6,
                         Sigmoid, SiLU, Softmax, Softplus, Softshrink, Softsign, Tanh, Tanhshrink)
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout, Dropout1d, Dropout2d
from .linear import Linear, NonDynamicallyQuantizableLinear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
                      MaxPool2d)
from .sparse import Embedding
from .transformer import TransformerEncoder, TransformerEncoderLayer

__all__ = ["Flatten", "Identity", "ModuleDict", "ModuleList", "Sequential", "Unflatten", "Module",
           "CELU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid",
           "Mish", "ReLU6", "Softshrink", "Softsign", "Tanhshrink",
           "ELU", "GELU", "LeakyReLU", "RReLU",
           "LogSoftmax", "MultiheadAttention", "ReLU", "Sigmoid",
           "SiLU", "Softmax", "Softplus", "Tanh", "Conv1d", "Conv2d", "ConvTranspose1d",
           "ConvTranspose2d", "Dropout", "Dropout1d", "Dropout2d", "Linear",
           "NonDynamicallyQuantizableLinear", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss",
           "HuberLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss", "BatchNorm1d",
           "BatchNorm2d", "GroupNorm", "LayerNorm", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d", "Embedding", "TransformerEncoder",
           "TransformerEncoderLayer"]

# recurrent layers and the transformer decoder
from .rnn import GRU, LSTM, RNN, RNNBase  # noqa: E402
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: E402
from .transformer_decoder import (Transformer, TransformerDecoder,  # noqa: E402
                                  TransformerDecoderLayer)

__all__ += ["GRU", "LSTM", "RNN", "RNNBase", "GRUCell", "LSTMCell", "RNNCell", "RNNCellBase",
            "Transformer", "TransformerDecoder", "TransformerDecoderLayer"]

# -- vision, distance and container extras --------------------------------------------------------
from .bilinear import Bilinear  # noqa: E402
from .conv3d import (AdaptiveAvgPool3d, AvgPool3d, Conv3d, ConvTranspose3d,  # noqa: E402
                     MaxPool3d)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402
from .embedding_bag import EmbeddingBag  # noqa: E402
from .fold import Fold, Unfold  # noqa: E402
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: E402
from .paramcontainers import ParameterDict, ParameterList  # noqa: E402
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: E402
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402

__all__ += ["AdaptiveAvgPool3d", "AvgPool3d", "Conv3d", "ConvTranspose3d", "MaxPool3d",
            "CosineSimilarity", "PairwiseDistance", "Fold", "Unfold", "InstanceNorm1d",
            "InstanceNorm2d", "InstanceNorm3d", "PixelShuffle", "PixelUnshuffle", "Upsample",
            "UpsamplingBilinear2d", "UpsamplingNearest2d", "Bilinear", "EmbeddingBag",
            "ParameterDict", "ParameterList"]

from .activation import GLU  # noqa: E402
from .dropout import AlphaDropout, Dropout3d, FeatureAlphaDropout  # noqa: E402

__all__ += ["GLU", "AlphaDropout", "Dropout3d", "FeatureAlphaDropout"]

# -- padding, extra losses, activations and norms --------------------------------------------------
from .activation_extra import PReLU, Softmin, Threshold  # noqa: E402
from .loss_extra import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,  # noqa: E402
                         KLDivLoss, MarginRankingLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                         PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss)
from .normalization import BatchNorm3d  # noqa: E402
from .normalization_extra import CrossMapLRN2d, LocalResponseNorm, RMSNorm  # noqa: E402
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: E402
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .pooling import AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d  # noqa: E402
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,  # noqa: E402
                   LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
                   LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
                   LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear, LazyModuleMixin)
from .loss_extra import MultiLabelMarginLoss, TripletMarginWithDistanceLoss  # noqa: E402
from .loss_extra import CTCLoss  # noqa: E402
from .pooling_more import (ChannelShuffle, LPPool1d, LPPool2d, LPPool3d, MaxUnpool1d,  # noqa: E402
                           MaxUnpool2d, MaxUnpool3d, Softmax2d)
from .fractional_pool import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from .deprecated import Container, NLLLoss2d  # noqa: E402
from .sync_batchnorm import SyncBatchNorm  # noqa: E402
from .linear_cross_entropy import LinearCrossEntropyLoss  # noqa: E402

_EXTRAS = ["CTCLoss", "PReLU", "Softmin", "Threshold", "CosineEmbeddingLoss", "GaussianNLLLoss",
           "HingeEmbeddingLoss", "KLDivLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
           "BatchNorm3d", "LocalResponseNorm", "RMSNorm", "CircularPad1d", "CircularPad2d",
           "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LazyLinear", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyModuleMixin",
           "TripletMarginWithDistanceLoss", "ChannelShuffle", "LPPool1d", "LPPool2d", "LPPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "Softmax2d", "MultiLabelMarginLoss",
           "FractionalMaxPool2d", "FractionalMaxPool3d", "AdaptiveLogSoftmaxWithLoss",
           "Container", "NLLLoss2d", "SyncBatchNorm", "LinearCrossEntropyLoss"]
__all__ += _EXTRAS + ["CrossMapLRN2d"]
