"""Wrong answers to chapter 04's exercises, written the way learners write them.

``MUTANTS[exercise_id] = (function, {name: body})``: each body replaces the solution
region of the cell that defines ``function`` (see ``mutants.py``, the harness every
chapter shares); every mutant must lose points. Names starting with ``delegates`` hand
the piece to minitorch's or PyTorch's own implementation and must get no points, with
the message "your answer used ...". ``CORRECT`` holds legitimate alternatives (same
form), which must keep full marks.
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
    "delegates_through_an_alias": """
        from minitorch.amp.grad_scaler import non_finite_check_and_unscale_ as check_

        grads = [p.grad.clone() for p in parameters if p.grad is not None]
        return bool(check_(grads, 1.0).item()) if grads else False
    """,
    "delegates_to_torch": """
        import torch

        return any(
            not torch.isfinite(torch.from_numpy(p.grad.numpy())).all()
            for p in parameters
            if p.grad is not None
        )
    """,
    "sum_overflows": """
        for p in parameters:
            if p.grad is not None and not np.isfinite(p.grad.detach().numpy().sum()):
                return True
        return False
    """,
    "any_instead_of_all": """
        for p in parameters:
            if p.grad is not None and not np.isfinite(p.grad.detach().numpy()).any():
                return True
        return False
    """,
    "generator_read_twice": """
        if not list(parameters):
            return False
        for p in parameters:
            if p.grad is not None and not np.isfinite(p.grad.detach().numpy()).all():
                return True
        return False
    """,
    "isnan_only": """
        for p in parameters:
            if p.grad is not None and np.isnan(p.grad.detach().numpy()).any():
                return True
        return False
    """,
    "cast_to_float16_first": """
        for p in parameters:
            if p.grad is not None:
                g16 = p.grad.detach().numpy().astype(np.float16)
                if not np.isfinite(g16).all():
                    return True
        return False
    """,
    "delegates_via_getattr": """
        check_ = getattr(mt.amp.grad_scaler, "non_finite_check_and_" + "unscale_")
        grads = [p.grad.clone() for p in parameters if p.grad is not None]
        return bool(check_(grads, 1.0).item()) if grads else False
    """,
    "norm_of_all_gradients": """
        grads = [p.grad.detach().numpy().ravel() for p in parameters if p.grad is not None]
        if not grads:
            return False
        return not np.isfinite(np.linalg.norm(np.concatenate(grads)))
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
    "delegates_through_an_alias": """
        from minitorch.amp.grad_scaler import update_scale as next_scale

        return next_scale(
            scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval
        )
    """,
    "grows_one_step_late": """
        if found_inf:
            return scale * backoff_factor, 0
        growth_tracker += 1
        if growth_tracker > growth_interval:
            return scale * growth_factor, 0
        return scale, growth_tracker
    """,
    "grows_one_step_early": """
        if found_inf:
            return scale * backoff_factor, 0
        growth_tracker += 1
        if growth_tracker == growth_interval - 1:
            return scale * growth_factor, 0
        return scale, growth_tracker
    """,
    "tracker_one_after_growth": """
        if found_inf:
            return scale * backoff_factor, 0
        growth_tracker += 1
        if growth_tracker == growth_interval:
            return scale * growth_factor, 1
        return scale, growth_tracker
    """,
    "returns_swapped": """
        if found_inf:
            return 0, scale * backoff_factor
        growth_tracker += 1
        if growth_tracker == growth_interval:
            return 0, scale * growth_factor
        return growth_tracker, scale
    """,
    "modulo_without_overflow_reset": """
        if found_inf:
            scale = scale * backoff_factor
        growth_tracker = (growth_tracker + 1) % growth_interval
        if growth_tracker == 0 and not found_inf:
            scale = scale * growth_factor
        return scale, growth_tracker
    """,
    "delegates_via_getattr": """
        rule = getattr(mt.amp, "update_" + "scale")
        args = (growth_factor, backoff_factor, growth_interval)
        return rule(scale, growth_tracker, found_inf, *args)
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
    "delegates_to_torch": """
        import torch

        grads = [torch.from_numpy(p.grad.numpy()) for p in parameters if p.grad is not None]
        found = torch.zeros(1)
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found, torch.tensor(1.0 / scale))
        return bool(found.item())
    """,
    "skips_the_bad_gradient": """
        found = False
        with mt.no_grad():
            for p in parameters:
                if p.grad is None:
                    continue
                if not np.isfinite(p.grad.numpy()).all():
                    found = True
                    continue
                p.grad.mul_(1.0 / scale)
        return found
    """,
    "stops_at_the_first_bad": """
        found = False
        with mt.no_grad():
            for p in parameters:
                if p.grad is None:
                    continue
                if not np.isfinite(p.grad.numpy()).all():
                    found = True
                    break
                p.grad.mul_(1.0 / scale)
        return found
    """,
    "numpy_write_bypasses_apply": """
        grads = [p.grad for p in parameters if p.grad is not None]
        found = any(not np.isfinite(g.numpy()).all() for g in grads)
        for g in grads:
            arr = g.numpy()
            arr *= 1.0 / scale
        return found
    """,
    "inv_scale_in_float16": """
        grads = [p.grad for p in parameters if p.grad is not None]
        found = any(not np.isfinite(g.numpy()).all() for g in grads)
        inv = mt.tensor(1.0 / scale, dtype=mt.float16)
        with mt.no_grad():
            for g in grads:
                g.mul_(inv)
        return found
    """,
    "delegates_through_grad_scaler": """
        params = [p for p in parameters if p.grad is not None]
        opt = mt.optim.SGD(params, lr=0.0)
        scaler = mt.amp.GradScaler(init_scale=scale)
        scaler.unscale_(opt)
        state = scaler._state(opt)["found_inf_per_device"]
        return any(bool(v.item()) for v in state.values())
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
    "delegates_to_the_category_table": """
        from minitorch.amp import autocast_mode

        kind = autocast_mode.category(op, "cpu")
        floats = [d for d in dtypes if d.is_floating_point]
        if kind is None or not floats:
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
    "fp32_narrows_float64": """
        kind = policy.get(op)
        floats = [d for d in dtypes if d.is_floating_point]
        if kind is None or not floats:
            return list(dtypes)
        if kind == "fp32":
            return [mt.float32 if d.is_floating_point else d for d in dtypes]
        if kind == "lower_precision_fp":
            keep = (d is mt.float64 or not d.is_floating_point for d in dtypes)
            return [d if k else fast_dtype for d, k in zip(dtypes, keep)]
        target = floats[0]
        for d in floats[1:]:
            target = mt.promote_types(target, d)
        return [target if d.is_floating_point else d for d in dtypes]
    """,
    "promote_casts_every_input": """
        kind = policy.get(op)
        floats = [d for d in dtypes if d.is_floating_point]
        if kind is None or not floats:
            return list(dtypes)
        if kind == "promote":
            target = floats[0]
            for d in floats[1:]:
                target = mt.promote_types(target, d)
            return [target for d in dtypes]
        target = fast_dtype if kind == "lower_precision_fp" else mt.float32
        return [target if d.is_floating_point and d is not mt.float64 else d for d in dtypes]
    """,
    "promote_without_floats_crashes": """
        kind = policy.get(op)
        if kind is None:
            return list(dtypes)
        if kind == "promote":
            floats = [d for d in dtypes if d.is_floating_point]
            target = floats[0]
            for d in floats[1:]:
                target = mt.promote_types(target, d)
            return [target if d.is_floating_point else d for d in dtypes]
        target = fast_dtype if kind == "lower_precision_fp" else mt.float32
        return [target if d.is_floating_point and d is not mt.float64 else d for d in dtypes]
    """,
    "category_name_typo": """
        kind = policy.get(op)
        floats = [d for d in dtypes if d.is_floating_point]
        if kind is None or not floats:
            return list(dtypes)
        if kind == "lower_precision":
            target = fast_dtype
        elif kind == "fp32":
            target = mt.float32
        else:
            target = floats[0]
            for d in floats[1:]:
                target = mt.promote_types(target, d)
        return [
            target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
            for d in dtypes
        ]
    """,
    "delegates_to_widest": """
        from minitorch.amp import autocast_mode

        kind = policy.get(op)
        if kind is None:
            return list(dtypes)
        if kind == "promote":
            target = autocast_mode._widest(tuple(mt.zeros(1, dtype=d) for d in dtypes))
            if target is None:
                return list(dtypes)
            return [target if d.is_floating_point else d for d in dtypes]
        target = fast_dtype if kind == "lower_precision_fp" else mt.float32
        return [target if d.is_floating_point and d is not mt.float64 else d for d in dtypes]
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
    "delegates_by_borrowing_methods": """
        def scale(self, loss):
            return loss * self.scale_value

        step = mt.amp.GradScaler.step
        update = mt.amp.GradScaler.update
    """,
    "first_param_group_only": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = optimizer.param_groups[0]["params"]
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
    "updates_inside_step_too": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            self.update()
            if not self.found_inf:
                optimizer.step()
            return not self.found_inf

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "found_inf_kept_local": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            found_inf = unscale_(params, self.scale_value)
            if not found_inf:
                optimizer.step()
            return not found_inf

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "step_returns_found_inf": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            if not self.found_inf:
                optimizer.step()
            return self.found_inf

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
    """,
    "unscales_twice": """
        def scale(self, loss):
            return loss * self.scale_value

        def step(self, optimizer):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.found_inf = unscale_(params, self.scale_value)
            if not self.found_inf:
                unscale_(params, self.scale_value)
                optimizer.step()
            return not self.found_inf

        def update(self):
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, self.found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval,
            )
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
        from minitorch.course import digits

        run = digits.train("fp16", epochs=1)
        return run.losses[: len(batches)]
    """,
    "update_before_step": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.update()
            scaler.step(optimizer)
            losses.append(loss.item())
        return losses
    """,
    "backward_inside_autocast": """
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
            scaler.update()
            losses.append(loss.item())
        return losses
    """,
    "loss_outside_autocast": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            scaler.scale(loss).backward()
            if max_norm is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
        return losses
    """,
    "dtype_ignored": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu"):
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
    "max_norm_hard_coded": """
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            with mt.autocast("cpu", dtype=dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            if max_norm:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
        return losses
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

#: Legitimate answers written differently from the solution: each keeps full marks.
CORRECT = {
    "04.1": (
        "found_inf",
        {
            "isnan_or_isinf_over_a_list": """
                grads = [p.grad.detach().numpy() for p in parameters if p.grad is not None]
                return any(bool(np.isnan(g).any() or np.isinf(g).any()) for g in grads)
            """,
            "self_compare_and_abs": """
                for p in parameters:
                    if p.grad is None:
                        continue
                    g = p.grad.detach().numpy()
                    if (g != g).any() or (np.abs(g) == np.inf).any():
                        return True
                return False
            """,
            "returns_numpy_bool": """
                grads = [p.grad.numpy() for p in parameters if p.grad is not None]
                return np.any([~np.isfinite(g).all() for g in grads])
            """,
        },
    ),
    "04.2": (
        "update_scale",
        {
            "compares_before_counting": """
                if found_inf:
                    return scale * backoff_factor, 0
                if growth_tracker + 1 >= growth_interval:
                    return scale * growth_factor, 0
                return scale, growth_tracker + 1
            """,
            "modulo_counter": """
                if found_inf:
                    return scale * backoff_factor, 0
                growth_tracker = (growth_tracker + 1) % growth_interval
                if growth_tracker == 0:
                    scale *= growth_factor
                return scale, growth_tracker
            """,
        },
    ),
    "04.3": (
        "unscale_",
        {
            "own_found_inf_then_div_": """
                params = list(parameters)
                found = found_inf(params)
                with mt.no_grad():
                    for p in params:
                        if p.grad is not None:
                            p.grad.div_(scale)
                return found
            """,
            "foreach_mul_": """
                grads = [p.grad for p in parameters if p.grad is not None]
                found = any(not np.isfinite(g.numpy()).all() for g in grads)
                with mt.no_grad():
                    mt._foreach_mul_(grads, 1.0 / scale)
                return bool(found)
            """,
            "in_place_operator": """
                params = [p for p in parameters if p.grad is not None]
                found = found_inf(params)
                with mt.no_grad():
                    for p in params:
                        g = p.grad
                        g *= 1.0 / scale
                return found
            """,
        },
    ),
    "04.4": (
        "autocast_dtypes",
        {
            "reduce_then_per_category": """
                import functools

                kind = policy.get(op)
                floats = [d for d in dtypes if d.is_floating_point]
                if kind is None or not floats:
                    return list(dtypes)
                if kind == "promote":
                    target = functools.reduce(mt.promote_types, floats)
                    return [target if d.is_floating_point else d for d in dtypes]
                target = fast_dtype if kind == "lower_precision_fp" else mt.float32
                return [target if d.is_floating_point and d != mt.float64 else d for d in dtypes]
            """,
        },
    ),
    "04.5": (
        "LossScaler",
        {
            "update_written_out": """
                def scale(self, loss):
                    return self.scale_value * loss

                def step(self, optimizer):
                    params = [p for g in optimizer.param_groups for p in g["params"]]
                    self.found_inf = unscale_(params, self.scale_value)
                    if self.found_inf:
                        return False
                    optimizer.step()
                    return True

                def update(self):
                    if self.found_inf:
                        self.scale_value *= self.backoff_factor
                        self.growth_tracker = 0
                        return
                    self.growth_tracker += 1
                    if self.growth_tracker == self.growth_interval:
                        self.scale_value *= self.growth_factor
                        self.growth_tracker = 0
            """,
            "generator_and_reset": """
                def scale(self, loss):
                    return loss * self.scale_value

                def step(self, optimizer):
                    params = (p for group in optimizer.param_groups for p in group["params"])
                    self.found_inf = unscale_(params, self.scale_value)
                    if self.found_inf:
                        return False
                    optimizer.step()
                    return True

                def update(self):
                    self.scale_value, self.growth_tracker = update_scale(
                        self.scale_value, self.growth_tracker, self.found_inf,
                        self.growth_factor, self.backoff_factor, self.growth_interval,
                    )
                    self.found_inf = False
            """,
        },
    ),
    "04.6": (
        "train_amp",
        {
            "always_unscales_before_step": """
                losses = []
                for x, y in batches:
                    optimizer.zero_grad()
                    with mt.autocast("cpu", dtype=dtype):
                        logits = model(x)
                        loss = nn.functional.cross_entropy(logits, y)
                    scaler.scale(loss).backward()
                    scaler.unscale_(optimizer)  # step() does not unscale twice
                    if max_norm is not None:
                        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                    scaler.step(optimizer)
                    scaler.update()
                    losses.append(float(loss))
                return losses
            """,
        },
    ),
}


# --- A second, independent round of learner answers (written from the exercise text alone).
ROUND_2 = {
    "04.1": {
        "stops_at_the_first_missing_grad": """
            for p in parameters:
                if p.grad is None:
                    return False
                if not np.isfinite(p.grad.detach().numpy()).all():
                    return True
            return False
        """,
        "only_the_last_gradient_counts": """
            bad = False
            for p in parameters:
                if p.grad is not None:
                    bad = not np.isfinite(p.grad.detach().numpy()).all()
            return bad
        """,
        "first_row_only": """
            for p in parameters:
                if p.grad is not None:
                    g = p.grad.detach().numpy()
                    if not np.isfinite(g[0] if g.ndim > 1 else g).all():
                        return True
            return False
        """,
        "iterates_rows_fails_on_0d": """
            for p in parameters:
                if p.grad is None:
                    continue
                for row in p.grad.detach().numpy():
                    if not np.isfinite(row).all():
                        return True
            return False
        """,
        "checks_the_parameters_not_the_grads": """
            for p in parameters:
                if p.grad is not None and not np.isfinite(p.detach().numpy()).all():
                    return True
            return False
        """,
        "casts_to_float16_first": """
            for p in parameters:
                g = p.grad
                if g is not None and not np.isfinite(g.detach().numpy().astype(np.float16)).all():
                    return True
            return False
        """,
        "delegates_via_sys_modules": """
            import sys

            scaler_module = sys.modules["minitorch.amp.grad_scaler"]
            grads = [p.grad.clone() for p in parameters if p.grad is not None]
            if not grads:
                return False
            return bool(scaler_module.non_finite_check_and_unscale_(grads, 1.0).item())
        """,
    },
    "04.2": {
        "rounds_the_scale_to_an_int": """
            if found_inf:
                return int(scale * backoff_factor), 0
            growth_tracker += 1
            if growth_tracker == growth_interval:
                return int(scale * growth_factor), 0
            return scale, growth_tracker
        """,
        "never_backs_off_below_one": """
            if found_inf:
                return max(scale * backoff_factor, 1.0), 0
            growth_tracker += 1
            if growth_tracker == growth_interval:
                return scale * growth_factor, 0
            return scale, growth_tracker
        """,
        "caps_the_scale_at_2_24": """
            if found_inf:
                return scale * backoff_factor, 0
            growth_tracker += 1
            if growth_tracker == growth_interval:
                return min(scale * growth_factor, 2.0**24), 0
            return scale, growth_tracker
        """,
        "overflow_halves_the_tracker": """
            if found_inf:
                return scale * backoff_factor, growth_tracker // 2
            growth_tracker += 1
            if growth_tracker == growth_interval:
                return scale * growth_factor, 0
            return scale, growth_tracker
        """,
    },
    "04.3": {
        "found_of_the_last_gradient_only": """
            found = False
            with mt.no_grad():
                for p in parameters:
                    if p.grad is not None:
                        found = not np.isfinite(p.grad.detach().numpy()).all()
                        p.grad.mul_(1.0 / scale)
            return found
        """,
        "found_inf_then_loops_a_generator": """
            found = found_inf(parameters)
            with mt.no_grad():
                for p in parameters:
                    if p.grad is not None:
                        p.grad.mul_(1.0 / scale)
            return found
        """,
        "unscales_the_parameters": """
            grads = [p.grad for p in parameters if p.grad is not None]
            found = any(not np.isfinite(g.detach().numpy()).all() for g in grads)
            with mt.no_grad():
                for p in parameters:
                    p.mul_(1.0 / scale)
            return found
        """,
        "integer_inverse": """
            grads = [p.grad for p in parameters if p.grad is not None]
            found = any(not np.isfinite(g.detach().numpy()).all() for g in grads)
            with mt.no_grad():
                for g in grads:
                    g.mul_(1 // scale if scale <= 1 else 1 / scale)
            return found
        """,
        "unscales_only_the_finite": """
            grads = [p.grad for p in parameters if p.grad is not None]
            found = False
            with mt.no_grad():
                for g in grads:
                    if np.isfinite(g.detach().numpy()).all():
                        g.mul_(1.0 / scale)
                    else:
                        found = True
            return found
        """,
        "delegates_via_functools_partial": """
            import functools

            grads = [p.grad for p in parameters if p.grad is not None]
            if not grads:
                return False
            check = functools.partial(mt.amp.non_finite_check_and_unscale_, grads)
            return bool(check(1.0 / scale).item())
        """,
    },
    "04.4": {
        "casts_in_the_callers_list": """
            kind = policy.get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return dtypes
            if kind == "lower_precision_fp":
                target = fast_dtype
            elif kind == "fp32":
                target = mt.float32
            else:
                target = floats[0]
                for d in floats[1:]:
                    target = mt.promote_types(target, d)
            for i, d in enumerate(dtypes):
                if d.is_floating_point and (d is not mt.float64 or kind == "promote"):
                    dtypes[i] = target
            return dtypes
        """,
        "lower_precision_casts_only_float32": """
            kind = policy.get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return list(dtypes)
            if kind == "lower_precision_fp":
                return [fast_dtype if d is mt.float32 else d for d in dtypes]
            if kind == "fp32":
                target = mt.float32
            else:
                target = floats[0]
                for d in floats[1:]:
                    target = mt.promote_types(target, d)
            return [
                target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
        "fp32_casts_only_float16": """
            kind = policy.get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return list(dtypes)
            if kind == "fp32":
                return [mt.float32 if d is mt.float16 else d for d in dtypes]
            if kind == "lower_precision_fp":
                target = fast_dtype
            else:
                target = floats[0]
                for d in floats[1:]:
                    target = mt.promote_types(target, d)
            return [
                target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
        "float_by_name_misses_bfloat16": """
            def is_float(d):
                return str(d).replace("minitorch.", "").startswith("float")

            kind = policy.get(op)
            floats = [d for d in dtypes if is_float(d)]
            if kind is None or not floats:
                return list(dtypes)
            if kind == "lower_precision_fp":
                target = fast_dtype
            elif kind == "fp32":
                target = mt.float32
            else:
                target = floats[0]
                for d in floats[1:]:
                    target = mt.promote_types(target, d)
            return [
                target if is_float(d) and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
        "delegates_via_importlib": """
            import importlib

            mode = importlib.import_module("minitorch.amp.autocast_mode")
            kind = policy.get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return list(dtypes)
            probes = [mt.zeros(1, dtype=d) for d in dtypes]
            target = fast_dtype if kind == "lower_precision_fp" else mt.float32
            if kind == "promote":
                target = mode._widest(tuple(probes))
            return [
                target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
    },
    "04.5": {
        "scale_hard_coded": """
            def scale(self, loss):
                return loss * 2.0**16

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
        "found_inf_of_the_last_group": """
            def scale(self, loss):
                return loss * self.scale_value

            def step(self, optimizer):
                for group in optimizer.param_groups:
                    self.found_inf = unscale_(group["params"], self.scale_value)
                if not self.found_inf:
                    optimizer.step()
                return not self.found_inf

            def update(self):
                self.scale_value, self.growth_tracker = update_scale(
                    self.scale_value, self.growth_tracker, self.found_inf,
                    self.growth_factor, self.backoff_factor, self.growth_interval,
                )
        """,
        "update_factors_swapped": """
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
                    self.scale_value, self.growth_tracker, self.found_inf,
                    self.backoff_factor, self.growth_factor, self.growth_interval,
                )
        """,
        "scales_the_loss_in_place": """
            def scale(self, loss):
                with mt.no_grad():
                    loss.mul_(self.scale_value)
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
        "update_resets_the_tracker_every_time": """
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
    },
    "04.6": {
        "max_norm_zero_treated_as_none": """
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                if max_norm:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
        "returns_loss_tensors": """
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
                scaler.update()
                losses.append(loss.detach())
            return losses
        """,
        "scales_by_a_constant": """
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                (loss * 65536.0).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
        "clips_every_parameter_separately": """
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    for p in model.parameters():
                        nn.utils.clip_grad_norm_([p], max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
        "clips_a_spent_generator": """
            losses = []
            params = model.parameters()
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(params, max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
        "losses_from_the_first_batch_repeated": """
            losses = []
            first = None
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                scaler.step(optimizer)
                scaler.update()
                first = loss.item() if first is None else first
                losses.append(first)
            return losses
        """,
    },
}

ROUND_2_CORRECT = {
    "04.4": {
        "promote_over_every_input": """
            kind = policy.get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return list(dtypes)
            if kind == "lower_precision_fp":
                target = fast_dtype
            elif kind == "fp32":
                target = mt.float32
            else:
                target = dtypes[0]
                for d in dtypes[1:]:
                    target = mt.promote_types(target, d)
            return [
                target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
    },
    "04.1": {
        "max_and_min_are_finite": """
            for p in parameters:
                if p.grad is None:
                    continue
                g = p.grad.detach().numpy()
                if g.size and not (np.isfinite(g.max()) and np.isfinite(g.min())):
                    return True
            return False
        """,
    },
    "04.2": {
        "tests_the_old_tracker": """
            if found_inf:
                return (scale * backoff_factor, 0)
            if growth_tracker == growth_interval - 1:
                return (scale * growth_factor, 0)
            return (scale, growth_tracker + 1)
        """,
        "scale_kept_in_float32_as_pytorch_does": """
            scale = np.float32(scale)
            if found_inf:
                return float(scale * np.float32(backoff_factor)), 0
            growth_tracker += 1
            if growth_tracker == growth_interval:
                return float(scale * np.float32(growth_factor)), 0
            return float(scale), growth_tracker
        """,
    },
    "04.3": {
        "inverse_in_float32_as_pytorch_does": """
            grads = [p.grad for p in parameters if p.grad is not None]
            inv_scale = np.float32(1.0) / np.float32(scale)
            found = False
            with mt.no_grad():
                for g in grads:
                    values = g.detach().numpy()
                    found |= bool(np.isnan(values).any() or np.isinf(values).any())
                    g.mul_(float(inv_scale))
            return found
        """,
        "copy_of_the_product": """
            found = False
            inv_scale = 1.0 / scale
            with mt.no_grad():
                for p in parameters:
                    if p.grad is None:
                        continue
                    found = found or not np.isfinite(p.grad.detach().numpy()).all()
                    p.grad.copy_(p.grad * inv_scale)
            return found
        """,
    },
    "04.6": {
        "model_zero_grad_and_a_list_of_parameters": """
            params = list(model.parameters())
            losses = []
            for x, y in batches:
                model.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(params, max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
        "loss_read_before_backward": """
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    out = model(x)
                    loss = nn.functional.cross_entropy(out, y)
                losses.append(float(loss.item()))
                scaled = scaler.scale(loss)
                scaled.backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                scaler.step(optimizer)
                scaler.update()
            return losses
        """,
    },
}

for _id, _bodies in ROUND_2.items():
    assert not set(_bodies) & set(MUTANTS[_id][1]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = (MUTANTS[_id][0], {**MUTANTS[_id][1], **_bodies})
for _id, _bodies in ROUND_2_CORRECT.items():
    CORRECT[_id] = (CORRECT[_id][0], {**CORRECT[_id][1], **_bodies})


# --- A third round: state kept outside the instance, the caller's objects changed in place,
# delegation through the package's internals, and more legitimate alternatives.
ROUND_3 = {
    "04.1": {
        "delegates_through_foreach_non_finite_apply": """
            from minitorch.amp.grad_scaler import ForeachNonFinite

            grads = [p.grad for p in parameters if p.grad is not None]
            if not grads:
                return False
            return any(bool(flag.item()) for flag in ForeachNonFinite.apply(grads))
        """,
    },
    "04.2": {
        "tracker_kept_in_a_module_global": """
            state = globals().setdefault("_clean_steps", {"count": 0})
            if found_inf:
                state["count"] = 0
                return scale * backoff_factor, 0
            state["count"] += 1
            if state["count"] == growth_interval:
                state["count"] = 0
                return scale * growth_factor, 0
            return scale, state["count"]
        """,
    },
    "04.3": {
        "delegates_the_check_to_foreach_non_finite": """
            from minitorch.amp import grad_scaler

            grads = [p.grad for p in parameters if p.grad is not None]
            if not grads:
                return False
            flags = grad_scaler.ForeachNonFinite.apply(grads)
            with mt.no_grad():
                for g in grads:
                    g.mul_(1.0 / scale)
            return any(flag.item() > 0 for flag in flags)
        """,
    },
    "04.4": {
        "memoized_without_the_fast_dtype": """
            cache = globals().setdefault("_autocast_cache", {})
            key = (op, tuple(dtypes))
            if key not in cache:
                kind = policy.get(op)
                floats = [d for d in dtypes if d.is_floating_point]
                if kind is None or not floats:
                    cache[key] = list(dtypes)
                else:
                    if kind == "lower_precision_fp":
                        target = fast_dtype
                    elif kind == "fp32":
                        target = mt.float32
                    else:
                        target = floats[0]
                        for d in floats[1:]:
                            target = mt.promote_types(target, d)
                    cache[key] = [
                        target
                        if d.is_floating_point and (d is not mt.float64 or kind == "promote")
                        else d
                        for d in dtypes
                    ]
            return list(cache[key])
        """,
        "reads_the_package_policy_not_the_argument": """
            from minitorch.amp import autocast_mode

            kind = autocast_mode.POLICY["cuda"].get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return list(dtypes)
            if kind == "lower_precision_fp":
                target = fast_dtype
            elif kind == "fp32":
                target = mt.float32
            else:
                target = floats[0]
                for d in floats[1:]:
                    target = mt.promote_types(target, d)
            return [
                target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
        "delegates_through_the_autocast_layer": """
            from minitorch.amp import autocast_mode

            class Op:
                name = op

            layer = autocast_mode.Autocast()
            layer.below = lambda cls, args, kwargs, ctx: args
            saved_dtypes, saved_policy = autocast_mode._state.dtypes, autocast_mode.POLICY["cpu"]
            autocast_mode._state.dtypes = {"cpu": fast_dtype}
            autocast_mode.POLICY["cpu"] = dict(policy)
            try:
                args = tuple(mt.zeros(1, dtype=d) for d in dtypes)
                return [a.dtype for a in layer(Op, args, {}, None)]
            finally:
                autocast_mode._state.dtypes = saved_dtypes
                autocast_mode.POLICY["cpu"] = saved_policy
        """,
    },
    "04.5": {
        "found_inf_in_a_module_global": """
            def scale(self, loss):
                return loss * self.scale_value

            def step(self, optimizer):
                global _last_found_inf
                params = [p for group in optimizer.param_groups for p in group["params"]]
                _last_found_inf = unscale_(params, self.scale_value)
                if not _last_found_inf:
                    optimizer.step()
                return not _last_found_inf

            def update(self):
                self.scale_value, self.growth_tracker = update_scale(
                    self.scale_value, self.growth_tracker, _last_found_inf,
                    self.growth_factor, self.backoff_factor, self.growth_interval,
                )
        """,
        "tracker_kept_on_the_class": """
            clean_steps = 0

            def scale(self, loss):
                return loss * self.scale_value

            def step(self, optimizer):
                params = [p for group in optimizer.param_groups for p in group["params"]]
                self.found_inf = unscale_(params, self.scale_value)
                if not self.found_inf:
                    optimizer.step()
                return not self.found_inf

            def update(self):
                self.scale_value, LossScaler.clean_steps = update_scale(
                    self.scale_value, LossScaler.clean_steps, self.found_inf,
                    self.growth_factor, self.backoff_factor, self.growth_interval,
                )
                self.growth_tracker = LossScaler.clean_steps
        """,
        "scales_the_callers_loss_in_place": """
            def scale(self, loss):
                loss.mul_(self.scale_value)
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
    },
    "04.6": {
        "parameters_kept_in_a_module_global": """
            params = globals().setdefault("_clipped_parameters", list(model.parameters()))
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(params, max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
        "pops_the_callers_batches": """
            losses = []
            while batches:
                x, y = batches.pop(0)
                optimizer.zero_grad()
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
    },
}

ROUND_3_CORRECT = {
    "04.3": {
        "through_the_data_attribute": """
            grads = [p.grad for p in parameters if p.grad is not None]
            found = any(not np.isfinite(g.detach().numpy()).all() for g in grads)
            with mt.no_grad():
                for g in grads:
                    g.data.mul_(1.0 / scale)
            return found
        """,
    },
    "04.1": {
        # the notebook's first cell importing a package class it never uses (`global` puts
        # the name where a top-level import would: in the notebook's namespace)
        "unused_import_of_a_package_class": """
            global ForeachNonFinite
            from minitorch.amp.grad_scaler import ForeachNonFinite  # noqa: F401

            for p in parameters:
                if p.grad is not None and not np.isfinite(p.grad.detach().numpy()).all():
                    return True
            return False
        """,
    },
    "04.2": {
        "conditional_expressions": """
            if found_inf:
                return float(scale) * backoff_factor, 0
            tracker = growth_tracker + 1
            grow = tracker >= growth_interval
            return (scale * growth_factor if grow else scale), (0 if grow else tracker)
        """,
    },
    "04.5": {
        "unused_class_level_import_of_grad_scaler": """
            from minitorch.amp import GradScaler  # noqa: F401 - imported, never used

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
                    self.scale_value, self.growth_tracker, self.found_inf,
                    self.growth_factor, self.backoff_factor, self.growth_interval,
                )
        """,
    },
    "04.6": {
        "one_autocast_object_reused": """
            region = mt.autocast("cpu", dtype=dtype)
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with region:
                    logits = model(x)
                    loss = nn.functional.cross_entropy(logits, y)
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
    },
}

for _id, _bodies in ROUND_3.items():
    assert not set(_bodies) & set(MUTANTS[_id][1]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = (MUTANTS[_id][0], {**MUTANTS[_id][1], **_bodies})
for _id, _bodies in ROUND_3_CORRECT.items():
    assert not set(_bodies) & set(CORRECT[_id][1]), f"duplicate alternative name in {_id}"
    CORRECT[_id] = (CORRECT[_id][0], {**CORRECT[_id][1], **_bodies})


# --- A fourth round (issue 34): a flag read off the products, promotion over two inputs, the
# finite gradients left scaled on a skipped step, gradients the model arrived with leaking
# into the first batch (zero_grad after the step, not before backward).
ROUND_4 = {
    "04.3": {
        "checks_after_unscaling": """
            grads = [p.grad for p in parameters if p.grad is not None]
            with mt.no_grad():
                for g in grads:
                    g.mul_(1.0 / scale)
            return any(not np.isfinite(g.numpy()).all() for g in grads)
        """,
        "checks_each_product": """
            found = False
            with mt.no_grad():
                for p in parameters:
                    if p.grad is not None:
                        p.grad.mul_(1.0 / scale)
                        found = found or not np.isfinite(p.grad.numpy()).all()
            return bool(found)
        """,
    },
    "04.4": {
        "promotes_the_first_two_floats": """
            kind = policy.get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return list(dtypes)
            if kind == "lower_precision_fp":
                target = fast_dtype
            elif kind == "fp32":
                target = mt.float32
            else:
                target = floats[0] if len(floats) == 1 else mt.promote_types(*floats[:2])
            return [
                target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
        "promotes_the_first_and_the_last_float": """
            kind = policy.get(op)
            floats = [d for d in dtypes if d.is_floating_point]
            if kind is None or not floats:
                return list(dtypes)
            if kind == "lower_precision_fp":
                target = fast_dtype
            elif kind == "fp32":
                target = mt.float32
            else:
                target = mt.promote_types(floats[0], floats[-1])
            return [
                target if d.is_floating_point and (d is not mt.float64 or kind == "promote") else d
                for d in dtypes
            ]
        """,
    },
    "04.5": {
        "skips_unscale_on_overflow": """
            def scale(self, loss):
                return loss * self.scale_value

            def step(self, optimizer):
                params = [p for group in optimizer.param_groups for p in group["params"]]
                grads = [p.grad for p in params if p.grad is not None]
                self.found_inf = any(not np.isfinite(g.numpy()).all() for g in grads)
                if self.found_inf:
                    return False
                unscale_(params, self.scale_value)
                optimizer.step()
                return True

            def update(self):
                self.scale_value, self.growth_tracker = update_scale(
                    self.scale_value, self.growth_tracker, self.found_inf,
                    self.growth_factor, self.backoff_factor, self.growth_interval,
                )
        """,
    },
    "04.6": {
        "zero_grad_after_the_step": """
            losses = []
            for x, y in batches:
                with mt.autocast("cpu", dtype=dtype):
                    out = model(x)
                    loss = nn.functional.cross_entropy(out, y)
                losses.append(float(loss))
                scaled = scaler.scale(loss)
                scaled.backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
            return losses
        """,
        "zero_grad_only_after_a_clean_step": """
            losses = []
            optimizer.zero_grad()
            for x, y in batches:
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                before = scaler.get_scale()
                scaler.step(optimizer)
                scaler.update()
                if scaler.get_scale() >= before:  # (a skipped step keeps its gradients)
                    optimizer.zero_grad()
                losses.append(loss.item())
            return losses
        """,
        "stops_at_a_non_finite_loss": """
            import math

            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                if not math.isfinite(loss.item()):
                    break
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
        "learning_rate_of_its_own": """
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                if max_norm is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                if all(
                    p.grad is None or np.isfinite(p.grad.numpy()).all()
                    for p in model.parameters()
                ):
                    with mt.no_grad():
                        for p in model.parameters():
                            if p.grad is not None:
                                p.sub_(p.grad * 0.01)
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
            return losses
        """,
    },
}

ROUND_4_CORRECT = {
    "04.3": {
        "flags_first_then_div_": """
            grads = [p.grad for p in parameters if p.grad is not None]
            found = False
            for g in grads:
                found = found or not np.isfinite(g.numpy()).all()
            with mt.no_grad(), np.errstate(over="ignore"):
                for g in grads:
                    g.div_(scale)
            return found
        """,
    },
    "04.6": {
        "zero_grad_before_and_after": """
            losses = []
            optimizer.zero_grad(set_to_none=False)
            for x, y in batches:
                with mt.autocast("cpu", dtype=dtype):
                    loss = nn.functional.cross_entropy(model(x), y)
                losses.append(loss.item())
                scaler.scale(loss).backward()
                if max_norm is not None:
                    scaler.unscale_(optimizer)
                    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
            return losses
        """,
    },
}

for _id, _bodies in ROUND_4.items():
    assert not set(_bodies) & set(MUTANTS[_id][1]), f"duplicate mutant name in {_id}"
    MUTANTS[_id] = (MUTANTS[_id][0], {**MUTANTS[_id][1], **_bodies})
for _id, _bodies in ROUND_4_CORRECT.items():
    assert not set(_bodies) & set(CORRECT[_id][1]), f"duplicate alternative name in {_id}"
    CORRECT[_id] = (CORRECT[_id][0], {**CORRECT[_id][1], **_bodies})
