"""The vector memory's one error: the store (local or on a server) cannot be used as asked."""


class VectorStoreError(RuntimeError):
    """The vector store cannot be used as asked; the message says why and what to do."""
