"""hookgrad.nn: modules, parameters and layers (torch.nn's names)."""
from . import functional, init, modules, utils
from .modules import Flatten, Identity, Module, ModuleDict, ModuleList, Sequential, Unflatten
from .modules import (ELU, GELU, AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d,
                      BCELoss, BCEWithLogitsLoss, Conv1d, Conv2d, ConvTranspose1d,
                      ConvTranspose2d, CrossEntropyLoss, Dropout, Dropout1d, Dropout2d,
                      Embedding, GroupNorm, HuberLoss, L1Loss, LayerNorm, LeakyReLU, RReLU, Linear,
                      LogSoftmax, MaxPool2d, MSELoss, MultiheadAttention, NLLLoss, ReLU, Sigmoid,
                      SiLU, SmoothL1Loss, Softmax, Softplus, Tanh, TransformerEncoder,
                      TransformerEncoderLayer)
from .modules import AdaptiveAvgPool1d, AvgPool1d, MaxPool1d
from .modules import (CELU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LogSigmoid, Mish,
                      ReLU6, Softshrink, Softsign, Tanhshrink)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

# recurrent layers and the transformer decoder
from .modules import (GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell,  # noqa: E402
                      RNNCellBase, Transformer, TransformerDecoder, TransformerDecoderLayer)

# -- vision, distance and container extras --------------------------------------------------------
from .modules import Bilinear, EmbeddingBag, ParameterDict, ParameterList  # noqa: E402
from .modules import (AdaptiveAvgPool3d, AvgPool3d, Conv3d, ConvTranspose3d,  # noqa: E402
                      MaxPool3d)
from .modules import (CosineSimilarity, InstanceNorm1d, InstanceNorm2d,  # noqa: E402
                      InstanceNorm3d, PairwiseDistance)
from .modules import (Fold, PixelShuffle, PixelUnshuffle, Unfold, Upsample,  # noqa: E402
                      UpsamplingBilinear2d, UpsamplingNearest2d)
from .modules import AlphaDropout, Dropout3d, FeatureAlphaDropout, GLU  # noqa: E402
from .modules import CTCLoss  # noqa: E402,F401
from .modules import CrossMapLRN2d  # noqa: E402,F401
from .modules import (AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,  # noqa: E402
                      BatchNorm3d, CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                      ConstantPad2d, ConstantPad3d, CosineEmbeddingLoss, GaussianNLLLoss,
                      HingeEmbeddingLoss, KLDivLoss, LocalResponseNorm, MarginRankingLoss,
                      MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, PReLU,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
                      ReplicationPad2d, ReplicationPad3d, RMSNorm, Softmin, SoftMarginLoss,
                      Threshold, TripletMarginLoss, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .modules import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,  # noqa: E402
                      LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
                      LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
                      LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear, LazyModuleMixin)
from .modules import (ChannelShuffle, LPPool1d, LPPool2d, LPPool3d, MaxUnpool1d,  # noqa: E402
                      MaxUnpool2d, MaxUnpool3d, MultiLabelMarginLoss, Softmax2d,
                      TripletMarginWithDistanceLoss)
from .modules import (AdaptiveLogSoftmaxWithLoss, Container, FractionalMaxPool2d,  # noqa: E402
                      FractionalMaxPool3d, LinearCrossEntropyLoss, NLLLoss2d, SyncBatchNorm)
from . import grad, parallel  # noqa: E402
from .parallel import DataParallel  # noqa: E402
