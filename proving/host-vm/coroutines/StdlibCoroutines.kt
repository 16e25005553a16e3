/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
// Kotlin's own coroutines (kotlin.coroutines of kotlin-stdlib 1.3.31, no kotlinx): four
// coroutines started with startCoroutine on a hand-written ContinuationInterceptor, which wraps
// each continuation so that a resumption becomes a Task (a Runnable) run on a single loop
// thread. Each suspends with suspendCoroutine a known number of times: "yields" resumed by the
// loop itself, "remote" resumed from another thread, in both cases once the loop is back from
// the task that suspended it (so every resumption is dispatched); the fourth yields 2000 times,
// for the JIT. Each coroutine prints its own count of resumptions and the threads it ran on; the
// interceptor prints its count of dispatches, the classes of the tasks, and whether exactly
// those objects ran on the loop, in order. Every Task.run resumes the coroutine through
// kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith.
@file:JvmName("StdlibCoroutinesKt")

import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.Continuation
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume
import kotlin.coroutines.startCoroutine
import kotlin.coroutines.suspendCoroutine

class Loop(name: String) {
    private val lock = java.lang.Object()
    private val queue = ArrayList<Runnable>()
    private var stopping = false
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

/** The interceptor's wrapper: resumeWith hands a task to the loop; the task resumes the coroutine. */
class Dispatched<T>(val interceptor: LoopInterceptor, val delegate: Continuation<T>) : Continuation<T> {
    override val context: CoroutineContext get() = delegate.context
    override fun resumeWith(result: Result<T>) = interceptor.dispatch(Task(delegate, result))
}

class Task<T>(private val delegate: Continuation<T>, private val result: Result<T>) : Runnable {
    override fun run() = delegate.resumeWith(result)
}

class LoopInterceptor(val loop: Loop) : AbstractCoroutineContextElement(ContinuationInterceptor), ContinuationInterceptor {
    @Volatile var dispatches = 0
    /** The identity hash code and the class of every task dispatched, in order. */
    val given = ArrayList<Int>()
    val kinds = ArrayList<String>()
    override fun <T> interceptContinuation(continuation: Continuation<T>): Continuation<T> =
        Dispatched(this, continuation)
    fun dispatch(task: Runnable) {
        synchronized(given) {
            dispatches++
            given.add(System.identityHashCode(task))
            kinds.add(task.javaClass.name)
            loop.post(task)
        }
    }
}

val pendingRemote = ArrayList<Continuation<Int>>()
val pendingYield = ArrayList<Continuation<Unit>>()

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

fun main() {
    val loop = Loop("loop")
    val resumer = Loop("resumer")
    val interceptor = LoopInterceptor(loop)
    loop.afterTask = {
        val ready = takeAll(pendingRemote)
        for (c in ready) resumer.post(Runnable { c.resume(100) })
        val yielded = takeAll(pendingYield)
        for (c in yielded) c.resume(Unit)
    }
    val done = java.lang.Object()
    var finished = 0
    val all = listOf(Stats(1, 1, 1), Stats(2, 2, 1), Stats(3, 3, 2), Stats(4, 2000, 0))
    loop.thread.start()
    resumer.thread.start()
    for (s in all) {
        val body: suspend () -> Unit = {
            s.threads.add(Thread.currentThread().name)
            for (k in 1..s.yields) {
                suspendCoroutine<Unit> { c -> pendingYield.add(c) }
                s.saw()
            }
            for (k in 1..s.remote) {
                s.sum += suspendCoroutine<Int> { c -> pendingRemote.add(c) }
                s.saw()
            }
        }
        body.startCoroutine(object : Continuation<Unit> {
            override val context: CoroutineContext = interceptor
            override fun resumeWith(result: Result<Unit>) {
                result.getOrThrow()
                synchronized(done) { finished++; done.notifyAll() }
            }
        })
    }
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
    println("dispatches: ${interceptor.dispatches} (expected $expected)")
    println("dispatched: ${histogram(interceptor.kinds)}")
    println("every dispatched task ran once on the loop, in order: ${interceptor.given == loop.ran}")
}
