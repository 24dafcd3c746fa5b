"""Built-in Functions of the nn layers (convolution, pooling, normalization, losses, embedding,
attention), one file per family. ``nn.functional`` is the public face of these."""
