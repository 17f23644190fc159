"""Tensors that an inferred call passes to an eager kernel, known from how they are made:
`torch.randn(M, K, dtype=torch.float16, device="cuda")`, `.cuda().half()`, `torch.empty_like(a)`.

An eager `@tilelang.jit` kernel reads only shapes and dtypes from its tensor arguments (its `T.const`
sizes come from them), so such a call is inspected with meta tensors of that shape, never allocated on a
device. Tensors whose shape needs running the file stay not inferable (inference.py).
"""

from __future__ import annotations

from dataclasses import dataclass

_MAKERS = ("randn", "rand", "zeros", "ones", "empty")  # torch.F(*shape or shape, dtype=...)
_LIKE = ("randn_like", "rand_like", "zeros_like", "ones_like", "empty_like")
_CASTS = {
    "half": "float16",
    "float": "float32",
    "bfloat16": "bfloat16",
    "double": "float64",
    "int": "int32",
    "long": "int64",
    "bool": "bool",
}
_KEEPS = (
    "cuda",
    "contiguous",
    "cpu",
    "clone",
    "detach",
    "requires_grad_",
    "normal_",
    "uniform_",
    "zero_",
    "fill_",
    "random_",
)  # moves, copies and in-place fills keep the shape and dtype


@dataclass(frozen=True)
class TensorShape:
    shape: tuple
    dtype: str  # a torch dtype's name: "float16"

    def __str__(self) -> str:
        return f"Tensor({'x'.join(map(str, self.shape))},{self.dtype})"

    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)

    def meta(self):
        import torch

        return torch.empty(self.shape, dtype=self.torch_dtype(), device="meta")


def made_tensor(function: str, args: list, kwargs: dict):
    """The tensor `torch.<function>(*args, **kwargs)` makes, or None when it is no known maker or its shape
    or dtype is not a plain value."""
    if function in _LIKE:
        like = args[0] if args else kwargs.get("input")
        return _with_dtype(like, kwargs.get("dtype")) if isinstance(like, TensorShape) else None
    if function == "tensor":
        # `torch.tensor(batch_sizes)`: its shape is the nesting of the list, its dtype as torch infers it
        data = args[0] if args else kwargs.get("data")
        shape, default = _nested_shape(data), _inferred_dtype(data)
    elif function == "arange" and len(args) == 1 and isinstance(args[0], int):
        shape, default = (args[0],), "int64"
    elif function == "randint":
        shape, default = _shape([kwargs.get("size", args[-1] if args else None)]), "int64"
    elif function == "full":
        shape, default = _shape(args[:1] or [kwargs.get("size")]), "float32"
    elif function in _MAKERS:
        shape, default = _shape(args or [kwargs.get("size")]), "float32"
    else:
        return None
    return None if shape is None else _with_dtype(TensorShape(shape, default), kwargs.get("dtype"))


def tensor_method(tensor: TensorShape, method: str, args: list):
    """`tensor.<method>(*args)` for the methods that keep its shape (casts, moves), else None."""
    if method in _KEEPS:
        return tensor
    if method == "size":
        return (
            tensor.shape[args[0]]
            if args and isinstance(args[0], int) and -len(tensor.shape) <= args[0] < len(tensor.shape)
            else (tensor.shape if not args else None)
        )
    if method in ("numel", "dim") and not args:
        return len(tensor.shape) if method == "dim" else _product(tensor.shape)
    if method in _CASTS and not args:
        return TensorShape(tensor.shape, _CASTS[method])
    if method in ("view", "reshape") and args and not isinstance(args[0], str):
        return _reshaped(tensor, _shape_with_free(args))
    if method == "sort":
        return tensor, TensorShape(tensor.shape, "int64")  # (values, indices)
    if method == "to":
        dtypes = [a for a in args if _dtype_name(a)]
        return _with_dtype(tensor, dtypes[0]) if dtypes else tensor
    return None


def elementwise(left, right, divides: bool):
    """The tensor `left <op> right` makes when one side is a tensor and the other a number or a tensor of the
    same shape and dtype (`torch.randn(...) / 10`); None otherwise. Integer tensors become float32 where
    torch promotes them: divided, or with a float."""
    tensor = left if isinstance(left, TensorShape) else right
    other = right if tensor is left else left
    if isinstance(other, TensorShape):
        return tensor if other == tensor and not divides else None
    if not isinstance(other, (bool, int, float)):
        return None
    integral = tensor.dtype.startswith(("int", "uint", "bool"))
    promoted = integral and (divides or isinstance(other, float))
    return TensorShape(tensor.shape, "float32") if promoted else tensor


def _shape(args: list):
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
    return sizes if sizes and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes) else None


def _nested_shape(data):
    """The shape of a nested list of numbers; None when it is ragged or holds anything else."""
    if isinstance(data, (bool, int, float)):
        return ()
    if not isinstance(data, (tuple, list)):
        return None
    if not data:
        return (0,)
    inner = {_nested_shape(item) for item in data}
    return (len(data), *next(iter(inner))) if len(inner) == 1 and None not in inner else None


def _inferred_dtype(data) -> str:
    flat = list(_flattened(data))
    if flat and all(isinstance(v, bool) for v in flat):
        return "bool"
    return "int64" if flat and all(isinstance(v, int) for v in flat) else "float32"


def _flattened(data):
    for item in data if isinstance(data, (tuple, list)) else [data]:
        if isinstance(item, (tuple, list)):
            yield from _flattened(item)
        else:
            yield item


def _shape_with_free(args: list):
    """`view(-1, N)`'s shape with -1 kept for `_reshaped` to fill in."""
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
    return sizes if all(isinstance(s, int) and not isinstance(s, bool) and s >= -1 for s in sizes) else None


def _product(sizes) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total


def _reshaped(tensor: TensorShape, sizes):
    total = _product(tensor.shape)
    known = _product(size for size in sizes or () if size != -1)
    if not sizes or sizes.count(-1) > 1 or known == 0 or total % known:
        return None
    return TensorShape(tuple(total // known if s == -1 else s for s in sizes), tensor.dtype)


def _with_dtype(tensor: TensorShape, dtype):
    if dtype is None:
        return tensor
    name = _dtype_name(dtype)
    return TensorShape(tensor.shape, name) if name else None


def _dtype_name(value) -> str | None:
    """`torch.float16` -> "float16"; a string names a dtype only when torch has it."""
    if type(value).__name__ == "dtype":
        return str(value).removeprefix("torch.")
    return None
