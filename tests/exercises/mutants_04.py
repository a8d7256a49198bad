"""Wrong answers to chapter 04's exercises, written the way learners write them.

Each mutant replaces the solution region of one exercise (its text is dedented, then put
at the region's indentation). ``test_04_amp_mutants.py`` checks that every one of them
loses points while the solution keeps full marks. Those named ``delegates_*`` hand the
piece to minitorch's or PyTorch's own implementation.
"""

FOUND_INF = {
    "only_inf": """
        for p in parameters:
            if p.grad is not None and np.isinf(p.grad.detach().numpy()).any():
                return True
        return False
    """,
    "equals_plus_inf": """
        for p in parameters:
            if p.grad is not None and (p.grad.detach().numpy() == np.inf).any():
                return True
        return False
    """,
    "first_grad_only": """
        for p in parameters:
            if p.grad is not None:
                return not np.isfinite(p.grad.detach().numpy()).all()
        return False
    """,
    "max_above_float16_range": """
        for p in parameters:
            if p.grad is not None and np.abs(p.grad.detach().numpy()).max() > 65504:
                return True
        return False
    """,
    "crashes_on_missing_grad": """
        return any(not np.isfinite(p.grad.detach().numpy()).all() for p in parameters)
    """,
    "inverted": """
        return all(np.isfinite(p.grad.numpy()).all() for p in parameters if p.grad is not None)
    """,
    "delegates_to_minitorch": """
        grads = [p.grad.clone() for p in parameters if p.grad is not None]
        return bool(mt.amp.non_finite_check_and_unscale_(grads, 1.0).item())
    """,
    "delegates_to_torch": """
        import torch

        return any(
            not torch.isfinite(torch.from_numpy(p.grad.numpy())).all()
            for p in parameters
            if p.grad is not None
        )
    """,
}

UPDATE_SCALE = {
    "checks_before_counting": """
        if found_inf:
            return scale * backoff_factor, 0
        if growth_tracker == growth_interval:
            return scale * growth_factor, 0
        return scale, growth_tracker + 1
    """,
    "no_reset_after_growth": """
        if found_inf:
            return scale * backoff_factor, 0
        growth_tracker += 1
        if growth_tracker % growth_interval == 0:
            return scale * growth_factor, growth_tracker
        return scale, growth_tracker
    """,
    "no_reset_after_backoff": """
        if found_inf:
            return scale * backoff_factor, growth_tracker
        growth_tracker += 1
        if growth_tracker == growth_interval:
            return scale * growth_factor, 0
        return scale, growth_tracker
    """,
    "hard_coded_factors": """
        if found_inf:
            return scale * 0.5, 0
        growth_tracker += 1
        if growth_tracker == growth_interval:
            return scale * 2.0, 0
        return scale, growth_tracker
    """,
    "counts_overflow_steps": """
        growth_tracker += 1
        if found_inf:
            scale = scale * backoff_factor
        if growth_tracker >= growth_interval:
            return scale * growth_factor, 0
        return scale, growth_tracker
    """,
    "divides_by_backoff": """
        if found_inf:
            return scale / backoff_factor, 0
        growth_tracker += 1
        if growth_tracker == growth_interval:
            return scale * growth_factor, 0
        return scale, growth_tracker
    """,
    "delegates_to_minitorch": """
        return mt.amp.update_scale(
            scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval
        )
    """,
}

UNSCALE = {
    "multiplies_by_scale": """
        grads = [p.grad for p in parameters if p.grad is not None]
        found = any(not np.isfinite(g.numpy()).all() for g in grads)
        with mt.no_grad():
            for g in grads:
                g.mul_(scale)
        return found
    """,
    "new_gradient_tensors": """
        params = [p for p in parameters if p.grad is not None]
        found = any(not np.isfinite(p.grad.numpy()).all() for p in params)
        for p in params:
            p.grad = p.grad / scale
        return found
    """,
    "skips_when_overflowing": """
        grads = [p.grad for p in parameters if p.grad is not None]
        if any(not np.isfinite(g.numpy()).all() for g in grads):
            return True
        with mt.no_grad():
            for g in grads:
                g.mul_(1.0 / scale)
        return False
    """,
    "inverted_flag": """
        grads = [p.grad for p in parameters if p.grad is not None]
        ok = all(np.isfinite(g.numpy()).all() for g in grads)
        with mt.no_grad():
            for g in grads:
                g.mul_(1.0 / scale)
        return ok
    """,
    "divides_twice": """
        grads = [p.grad for p in parameters if p.grad is not None]
        found = any(not np.isfinite(g.numpy()).all() for g in grads)
        with mt.no_grad():
            for g in grads:
                g.div_(scale)
                g.div_(scale)
        return found
    """,
    "misses_nan": """
        grads = [p.grad for p in parameters if p.grad is not None]
        found = any(np.isinf(g.numpy()).any() for g in grads)
        with mt.no_grad():
            for g in grads:
                g.mul_(1.0 / scale)
        return found
    """,
    "delegates_to_minitorch": """
        grads = [p.grad for p in parameters if p.grad is not None]
        with mt.no_grad():
            return bool(mt.amp.non_finite_check_and_unscale_(grads, 1.0 / scale).item())
    """,
}

AUTOCAST_DTYPES = {
    "narrows_float64": """
        kind = policy.get(op)
        if kind is None:
            return list(dtypes)
        floats = [d for d in dtypes if d.is_floating_point]
        target = {"lower_precision_fp": fast_dtype, "fp32": mt.float32}.get(kind)
        if target is None:
            target = floats[0]
            for d in floats[1:]:
                target = mt.promote_types(target, d)
        return [target if d.is_floating_point else d for d in dtypes]
    """,
    "casts_integers_too": """
        kind = policy.get(op)
        if kind is None:
            return list(dtypes)
        floats = [d for d in dtypes if d.is_floating_point] or list(dtypes)
        target = {"lower_precision_fp": fast_dtype, "fp32": mt.float32}.get(kind)
        if target is None:
            target = floats[0]
            for d in floats[1:]:
                target = mt.promote_types(target, d)
        return [d if d is mt.float64 and kind != "promote" else target for d in dtypes]
    """,
    "promotes_by_itemsize": """
        kind = policy.get(op)
        floats = [d for d in dtypes if d.is_floating_point]
        if kind is None or not floats:
            return list(dtypes)
        target = {"lower_precision_fp": fast_dtype, "fp32": mt.float32}.get(kind)
        if target is None:
            target = max(floats, key=lambda d: d.itemsize)
        return [
            target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
            for d in dtypes
        ]
    """,
    "casts_unlisted_ops": """
        kind = policy.get(op, "lower_precision_fp")
        floats = [d for d in dtypes if d.is_floating_point]
        if not floats:
            return list(dtypes)
        target = {"lower_precision_fp": fast_dtype, "fp32": mt.float32}.get(kind)
        if target is None:
            target = floats[0]
            for d in floats[1:]:
                target = mt.promote_types(target, d)
        return [
            target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
            for d in dtypes
        ]
    """,
    "fast_dtype_hard_coded": """
        kind = policy.get(op)
        floats = [d for d in dtypes if d.is_floating_point]
        if kind is None or not floats:
            return list(dtypes)
        target = {"lower_precision_fp": mt.float16, "fp32": mt.float32}.get(kind)
        if target is None:
            target = floats[0]
            for d in floats[1:]:
                target = mt.promote_types(target, d)
        return [
            target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
            for d in dtypes
        ]
    """,
    "promote_takes_the_first": """
        kind = policy.get(op)
        floats = [d for d in dtypes if d.is_floating_point]
        if kind is None or not floats:
            return list(dtypes)
        target = {"lower_precision_fp": fast_dtype, "fp32": mt.float32}.get(kind, floats[0])
        return [
            target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
            for d in dtypes
        ]
    """,
    "delegates_to_minitorch": """
        from minitorch.amp import autocast_mode

        policy_before = autocast_mode.POLICY["cpu"]
        autocast_mode.POLICY["cpu"] = dict(policy)
        try:
            with mt.autocast("cpu", dtype=fast_dtype):
                args = tuple(mt.zeros(1, dtype=d) for d in dtypes)
                return [a.dtype for a in autocast_mode.cast_inputs(op, args)]
        finally:
            autocast_mode.POLICY["cpu"] = policy_before
    """,
}

LOSS_SCALER = {
    "steps_on_overflow": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            optimizer.step()
            return True

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "loss_not_scaled": """
        def scale(self, loss):
            return loss

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            if not self.found_inf:
                optimizer.step()
            return not self.found_inf

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "update_ignores_overflow": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            if not self.found_inf:
                optimizer.step()
            return not self.found_inf

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, False,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "never_unscales": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = any(
                not np.isfinite(p.grad.numpy()).all() for p in params if p.grad is not None
            )
            if not self.found_inf:
                optimizer.step()
            return not self.found_inf

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "step_returns_nothing": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            if not self.found_inf:
                optimizer.step()

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "update_forgets_tracker": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            if not self.found_inf:
                optimizer.step()
            return not self.found_inf

        def update(self):
            self.scale_value, _ = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "delegates_to_grad_scaler": """
        def scale(self, loss):
            if not hasattr(self, "inner"):
                self.inner = mt.amp.GradScaler(
                    init_scale=self.scale_value, growth_interval=self.growth_interval
                )
            return self.inner.scale(loss)

        def step(self, optimizer):
            self.inner.step(optimizer)
            return True

        def update(self):
            self.inner.update()
            self.scale_value = self.inner.get_scale()
    """,
}

TRAIN_AMP = {
    "forward_outside_autocast": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
        return losses
    """,
    "unscaled_backward": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
        return losses
    """,
    "optimizer_steps_directly": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            if max_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
            scaler.update()
            losses.append(loss.item())
        return losses
    """,
    "forgets_update": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            losses.append(loss.item())
        return losses
    """,
    "clips_before_unscale": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            if max_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
        return losses
    """,
    "forgets_zero_grad": """
        losses = []
        for x, y in batches:
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
        return losses
    """,
    "returns_scaled_losses": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            scaled = scaler.scale(loss)
            scaled.backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            losses.append(scaled.item())
        return losses
    """,
    "delegates_to_minitorch": """
        from minitorch.amp import digits

        run = digits.train("fp16", epochs=1)
        return run.losses[: len(batches)]
    """,
}

#: exercise id -> (the function or class whose solution region a mutant replaces, mutants)
MUTANTS = {
    "04.1": ("found_inf", FOUND_INF),
    "04.2": ("update_scale", UPDATE_SCALE),
    "04.3": ("unscale_", UNSCALE),
    "04.4": ("autocast_dtypes", AUTOCAST_DTYPES),
    "04.5": ("LossScaler", LOSS_SCALER),
    "04.6": ("train_amp", TRAIN_AMP),
}
