#!/bin/sh
# Interleaves stdout and stderr; merged capture must keep the order.
echo 1
echo 2 >&2
echo 3
echo 4 >&2
