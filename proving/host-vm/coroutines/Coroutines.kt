/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
// kotlinx.coroutines 1.0.1 on a hand-written single-thread dispatcher: four coroutines, started
// by GlobalScope.launch, each yield a known number of times (yield() ->
// CoroutineDispatcher.dispatchYield -> dispatch) and are resumed a known number of times from
// another thread (CancellableContinuationImpl.resume -> DispatchedKt.dispatch -> dispatch); the
// fourth yields 2000 times, so that the machinery gets hot enough for the JIT. Each coroutine
// prints its own count of resumptions and the threads it ran on; the dispatcher prints its count
// of dispatches, the classes of the Runnables it was handed, and whether exactly those objects
// (by identity hash code) ran on the loop, in order: the program's own account of what coroutine
// task records (submit at dispatch, begin at DispatchedTask.run) would pair. The counts are
// exact: a continuation is handed to the resumer only after the task that suspended it has
// returned to the loop, so every resumption finds its coroutine suspended and is dispatched.
@file:JvmName("CoroutinesKt")

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.yield
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume

/** A thread that runs the Runnables given to it in order, until stopped. */
class Loop(name: String) {
    private val lock = java.lang.Object()
    private val queue = ArrayList<Runnable>()
    private var stopping = false
    /** Runs on the loop thread after every task (the dispatcher hands over suspended work here). */
    var afterTask: (() -> Unit)? = null
    val thread = Thread(Runnable { loop() }, name).apply { isDaemon = true }
    /** The identity hash codes of the tasks this loop ran, in order. */
    val ran = ArrayList<Int>()

    fun post(r: Runnable) = synchronized(lock) {
        queue.add(r)
        lock.notifyAll()
    }

    fun stop() = synchronized(lock) {
        stopping = true
        lock.notifyAll()
    }

    private fun loop() {
        while (true) {
            var task: Runnable? = null
            synchronized(lock) {
                while (queue.isEmpty() && !stopping) lock.wait()
                if (queue.isNotEmpty()) task = queue.removeAt(0)
            }
            val t = task ?: return
            ran.add(System.identityHashCode(t))
            try {
                t.run()
                afterTask?.invoke()
            } catch (e: Throwable) {
                // the program would wait for its coroutines forever: say why and end it
                e.printStackTrace()
                System.exit(3)
            }
        }
    }
}

/** The dispatcher under test: every dispatch is a post to its loop. */
class LoopDispatcher(val loop: Loop) : CoroutineDispatcher() {
    @Volatile var dispatches = 0
    /** The identity hash code and the class of every Runnable dispatched, in order. */
    val given = ArrayList<Int>()
    val kinds = ArrayList<String>()
    /** The thread that dispatched each. */
    val from = ArrayList<String>()
    override fun dispatch(context: CoroutineContext, block: Runnable) {
        synchronized(given) {
            dispatches++
            given.add(System.identityHashCode(block))
            kinds.add(block.javaClass.name)
            from.add(Thread.currentThread().name)
            loop.post(block)
        }
    }
    override fun toString() = "LoopDispatcher(${loop.thread.name})"
}

/** Continuations to resume from the resumer thread once the loop is back from the task. */
val pending = ArrayList<CancellableContinuation<Int>>()

class Stats(val id: Int, val yields: Int, val remote: Int) {
    var resumptions = 0
    val threads = ArrayList<String>()
    var sum = 0
    fun saw() {
        resumptions++
        val n = Thread.currentThread().name
        if (!threads.contains(n)) threads.add(n)
    }
}

/** LIST's elements, in order, and LIST emptied (mini-core's ArrayList has no copy constructor). */
fun <T> takeAll(list: ArrayList<T>): ArrayList<T> {
    val out = ArrayList<T>()
    for (i in 0 until list.size) out.add(list[i])
    list.clear()
    return out
}

/** "name xN" for each distinct string of LIST, in order of first appearance. */
fun histogram(list: ArrayList<String>): String {
    val names = ArrayList<String>()
    val counts = ArrayList<Int>()
    for (i in 0 until list.size) {
        val j = names.indexOf(list[i])
        if (j < 0) {
            names.add(list[i])
            counts.add(1)
        } else {
            counts[j] = counts[j] + 1
        }
    }
    val b = StringBuilder()
    for (i in 0 until names.size) b.append(if (i == 0) "" else ", ").append(names[i]).append(" x").append(counts[i])
    return b.toString()
}

/**
 * One coroutine per Stats on DISPATCHER; each calls FINISHED when done. A function of its own, so
 * that a trace started after main() was entered still sees the launches' caller.
 */
fun launchAll(dispatcher: LoopDispatcher, all: List<Stats>, finished: () -> Unit) {
    for (s in all) {
        val job = GlobalScope.launch(dispatcher) {
            s.threads.add(Thread.currentThread().name)
            for (k in 1..s.yields) {
                yield()
                s.saw()
            }
            for (k in 1..s.remote) {
                s.sum += suspendCancellableCoroutine<Int> { c -> pending.add(c) }
                s.saw()
            }
        }
        job.invokeOnCompletion { finished() }
    }
}

/** With the argument "trace": the calls a Hubble trace of this run must hold, then a flush. */
fun main(args: Array<String>) {
    val trace = args.size > 0 && args[0] == "trace"
    if (trace) Thread.sleep(500) // the control thread starts tracing as the app starts
    val loop = Loop("loop")
    val resumer = Loop("resumer")
    val dispatcher = LoopDispatcher(loop)
    loop.afterTask = {
        val ready = takeAll(pending)
        for (c in ready) resumer.post(Runnable { c.resume(100) })
    }
    val done = java.lang.Object()
    var finished = 0
    val all = listOf(Stats(1, 1, 1), Stats(2, 2, 1), Stats(3, 3, 2), Stats(4, 2000, 0))
    loop.thread.start()
    resumer.thread.start()
    launchAll(dispatcher, all) { synchronized(done) { finished++; done.notifyAll() } }
    synchronized(done) { while (finished < all.size) done.wait() }
    loop.stop()
    resumer.stop()
    loop.thread.join()
    resumer.thread.join()
    var expected = all.size
    for (s in all) {
        println("coroutine ${s.id}: ${s.resumptions} resumptions (${s.yields} yields, ${s.remote} remote, sum ${s.sum}) on ${s.threads}")
        expected += s.yields + s.remote
    }
    println("dispatches: ${dispatcher.dispatches} (expected $expected)")
    println("dispatched: ${histogram(dispatcher.kinds)}")
    println("every dispatched task ran once on the loop, in order: ${dispatcher.given == loop.ran}")
    if (trace) {
        // Every task the loop ran is a DispatchedTask whose run() resumes the coroutine's own
        // frame (its SuspendLambda, a BaseContinuationImpl), which calls invokeSuspend once.
        val lambda = "CoroutinesKt\$launchAll\$job\$1.invokeSuspend"
        println("calls loop kotlinx.coroutines.DispatchedTask.run ${loop.ran.size}")
        println("calls loop kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith ${loop.ran.size}")
        println("calls loop $lambda ${loop.ran.size}")
        for (t in listOf("main", "loop", "resumer")) {
            var n = 0
            for (i in 0 until dispatcher.from.size) if (dispatcher.from[i] == t) n++
            println("calls $t LoopDispatcher.dispatch $n")
        }
        println("parent kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith kotlinx.coroutines.DispatchedTask.run")
        println("parent $lambda kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith")
        Thread.currentThread().setName("HUBBLE:flush:done")
        Thread.sleep(1500)
        // What task records pair (check_tasks.py): the dispatcher is their queue, each Runnable
        // it was given a task, submitted by the thread that dispatched it and run on the loop.
        // Printed after the flush: its thousands of calls would crowd the loop's out of the pool.
        println("queue ${System.identityHashCode(dispatcher)}")
        for (i in 0 until dispatcher.given.size) println("task ${dispatcher.given[i]} ${dispatcher.from[i]} loop")
    }
}
